// @ts-check
/**
 * Two runs side by side: their events aligned by type (and CUSTOM name or
 * pipeline `eventType`), so an event one run has and the other lacks, or
 * one that moved, stands out; then the text each message streamed, message
 * by message, where it differs, with the words that changed marked; then
 * the payloads (tool arguments and results, state) field by field
 * (`payload-diff.js`). Ids, run ids and timestamps differ between any two
 * runs and say nothing, so they are left out of the comparison.
 */
import { h } from "./dom.js";
import { subtype } from "./event-text.js";
import { payloadChanges, payloadView, wordDiff, wordSide } from "./payload-diff.js";

/** @typedef {{ events: { event: Record<string, any> }[], title: string }} Comparable */
/** @typedef {{ op: "same" | "removed" | "added", a?: number, b?: number, label: string }} DiffRow */
/** @typedef {{ index: number, a: string | undefined, b: string | undefined, labelA: string, labelB: string }} TextChange */

/** What an event is, for the comparison: its type, and for CUSTOM its name or pipeline event type. @param {Record<string, any>} event */
export function signature(event) {
  const sub = subtype(event);
  return sub ? `${event.type} ${sub}` : String(event.type);
}

/**
 * A shortest edit script between two sequences of signatures (longest common
 * subsequence; runs are a few thousand events at most, and the table is
 * only as large as the part that differs once equal ends are trimmed).
 * @param {string[]} a @param {string[]} b @returns {DiffRow[]}
 */
export function alignSignatures(a, b) {
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const n = endA - start;
  const m = endB - start;
  // lengths[i][j]: the longest common subsequence of a[start+i..endA) and b[start+j..endB).
  const lengths = new Uint32Array((n + 1) * (m + 1));
  const lcs = (/** @type {number} */ i, /** @type {number} */ j) => lengths[i * (m + 1) + j] ?? 0;
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--)
      lengths[i * (m + 1) + j] = a[start + i] === b[start + j] ? lcs(i + 1, j + 1) + 1 : Math.max(lcs(i + 1, j), lcs(i, j + 1));
  /** @type {DiffRow[]} */
  const rows = [];
  for (let k = 0; k < start; k++) rows.push({ op: "same", a: k, b: k, label: a[k] ?? "" });
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[start + i] === b[start + j]) {
      rows.push({ op: "same", a: start + i, b: start + j, label: a[start + i] ?? "" });
      i++;
      j++;
    } else if (j < m && (i === n || lcs(i, j + 1) >= lcs(i + 1, j))) {
      rows.push({ op: "added", b: start + j, label: b[start + j] ?? "" });
      j++;
    } else {
      rows.push({ op: "removed", a: start + i, label: a[start + i] ?? "" });
      i++;
    }
  }
  for (let k = 0; k < a.length - endA; k++) rows.push({ op: "same", a: endA + k, b: endB + k, label: a[endA + k] ?? "" });
  return rows;
}

/**
 * The text of each message and reasoning block, in the order they started
 * (ids differ from run to run; order is what two runs of one scenario share).
 * @param {Comparable} run @returns {{ label: string, text: string }[]}
 */
export function messageTexts(run) {
  /** @type {Map<string, { label: string, text: string }>} */
  const texts = new Map();
  for (const { event } of run.events) {
    const id = String(event.messageId ?? "");
    if (event.type === "TEXT_MESSAGE_START" || event.type === "REASONING_START")
      texts.set(id, { label: event.type === "REASONING_START" ? "reasoning" : String(event.role ?? "assistant"), text: "" });
    else if ((event.type === "TEXT_MESSAGE_CONTENT" || event.type === "REASONING_MESSAGE_CONTENT") && typeof event.delta === "string") {
      const entry = texts.get(id) ?? { label: "text", text: "" };
      entry.text += event.delta;
      texts.set(id, entry);
    }
  }
  return [...texts.values()];
}

/** @param {Comparable} a @param {Comparable} b */
export function diffRuns(a, b) {
  const rows = alignSignatures(
    a.events.map((entry) => signature(entry.event)),
    b.events.map((entry) => signature(entry.event)),
  );
  const textsA = messageTexts(a);
  const textsB = messageTexts(b);
  /** @type {TextChange[]} */
  const texts = [];
  for (let index = 0; index < Math.max(textsA.length, textsB.length); index++) {
    const left = textsA[index];
    const right = textsB[index];
    if (left?.text !== right?.text)
      texts.push({ index, a: left?.text, b: right?.text, labelA: left?.label ?? "", labelB: right?.label ?? "" });
  }
  const count = (/** @type {DiffRow["op"]} */ op) => rows.filter((row) => row.op === op).length;
  const payloads = payloadChanges(a, b);
  return { rows, texts, payloads, same: count("same"), removed: count("removed"), added: count("added") };
}

/**
 * The comparison as a section of the page: a summary, the aligned event
 * types (runs of equal events folded), and the texts that differ.
 * @param {Comparable} a @param {Comparable} b @param {string} nameA @param {string} nameB
 */
export function diffView(a, b, nameA, nameB) {
  const diff = diffRuns(a, b);
  const identical = diff.added === 0 && diff.removed === 0 && diff.texts.length === 0;
  const summary = identical
    ? `Same event types in the same order, and the same text (${diff.same} events).`
    : `${diff.same} events alike · ${diff.removed} only in ${nameA} · ${diff.added} only in ${nameB} · ${diff.texts.length === 1 ? "1 message text differs" : `${diff.texts.length} message texts differ`}`;
  const fields = diff.payloads.reduce((sum, group) => sum + group.changes.length, 0);
  const payloadSummary =
    fields === 0
      ? "Tool arguments, results and state alike."
      : `${fields === 1 ? "1 payload field differs" : `${fields} payload fields differ`} (${diff.payloads.map((group) => group.label).join("; ")})`;
  /** @type {HTMLElement[]} */
  const lines = [];
  let folded = 0;
  const flushFolded = () => {
    if (folded > 0) lines.push(h("li", { class: "diff-fold" }, `… ${folded} alike`));
    folded = 0;
  };
  diff.rows.forEach((row, at) => {
    const near = diff.rows.slice(Math.max(0, at - 2), at + 3).some((other) => other.op !== "same");
    if (row.op === "same" && !near) return void folded++;
    flushFolded();
    const mark = { same: " ", removed: "−", added: "+" }[row.op];
    const where = row.op === "added" ? `#${row.b}` : `#${row.a}`;
    lines.push(
      h(
        "li",
        { class: `diff-row diff-${row.op}` },
        h("span", { class: "diff-mark" }, mark),
        h("span", { class: "diff-at" }, where),
        row.label,
      ),
    );
  });
  flushFolded();
  return h(
    "section",
    { class: "run-diff", "aria-label": `Difference between ${nameA} and ${nameB}` },
    h("h2", {}, `${nameA} ↔ ${nameB}`),
    h("p", { class: "diff-summary" }, summary),
    h("p", { class: "diff-payload-summary" }, payloadSummary),
    identical ? null : h("ol", { class: "diff-events", "aria-label": "Event types, aligned" }, lines),
    diff.texts.length === 0
      ? null
      : h(
          "div",
          { class: "diff-texts" },
          h("h3", {}, "Message text"),
          diff.texts.map((change) => {
            // The changed words marked on each side; a message only one run has is all change.
            const ops = wordDiff(change.a ?? "", change.b ?? "");
            return h(
              "div",
              { class: "diff-text" },
              h("p", { class: "diff-text-head" }, `message ${change.index + 1} (${change.labelA || change.labelB})`),
              h(
                "pre",
                { class: "diff-removed" },
                change.a === undefined ? `(no such message in ${nameA})` : ["− ", ...wordSide(ops, "removed")],
              ),
              h(
                "pre",
                { class: "diff-added" },
                change.b === undefined ? `(no such message in ${nameB})` : ["+ ", ...wordSide(ops, "added")],
              ),
            );
          }),
        ),
    diff.payloads.length === 0 ? null : payloadView(diff.payloads, nameA, nameB),
  );
}
