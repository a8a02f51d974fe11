// @ts-check
/**
 * The compare's look inside payloads: what two runs' tool calls were given
 * and answered, and what their state became, field by field; and, in any
 * text, the words that changed rather than the whole paragraph. Fields that
 * differ between any two runs and say nothing (ids, times, durations) are
 * left out, as the event alignment leaves out ids and timestamps.
 */
import { h } from "./dom.js";
import { applyPatch } from "./json-patch.js";

/** @typedef {{ op: "same" | "removed" | "added", text: string }} WordOp */
/** @typedef {{ path: string, a: unknown, b: unknown }} FieldChange */
/** @typedef {{ label: string, changes: FieldChange[] }} PayloadChange */
/** @typedef {{ events: { event: Record<string, any> }[] }} Comparable */

/** Above this many cells the word table is not built: the two texts are shown whole, each marked changed. */
const MAX_WORD_CELLS = 4_000_000;
/** Unchanged words kept either side of a change; longer equal stretches fold to "…". */
const CONTEXT_WORDS = 8;

/**
 * Keys whose values differ from run to run by nature: the ids of runs,
 * messages, tool calls, tasks and the like, times, durations, sequence
 * numbers. A domain id (a `regionId`, a `stackId`) is compared.
 * @param {string} key
 */
export const ignoredField = (key) =>
  /^(?:id|timestamp|sequence|durationMs)$|At$|(?:run|message|call|execution|task|context|thread|interrupt|session|invocation)Ids?$/i.test(
    key,
  );

/** Words and the spaces between them, so that joining the tokens gives the text back. @param {string} text */
export const tokens = (text) => text.match(/\s+|[^\s]+/g) ?? [];

/**
 * The words of `a` and `b` as one edit script: longest common subsequence
 * on tokens, after trimming the equal ends (a reworded sentence in a long
 * answer costs a table the size of that sentence).
 * @param {string} a @param {string} b @returns {WordOp[]}
 */
export function wordDiff(a, b) {
  const x = tokens(a);
  const y = tokens(b);
  let start = 0;
  while (start < x.length && start < y.length && x[start] === y[start]) start++;
  let endX = x.length;
  let endY = y.length;
  while (endX > start && endY > start && x[endX - 1] === y[endY - 1]) {
    endX--;
    endY--;
  }
  /** @type {WordOp[]} */
  const ops = [];
  const push = (/** @type {WordOp["op"]} */ op, /** @type {string} */ text) => {
    const last = ops.at(-1);
    if (last && last.op === op) last.text += text;
    else if (text) ops.push({ op, text });
  };
  push("same", x.slice(0, start).join(""));
  const n = endX - start;
  const m = endY - start;
  if ((n + 1) * (m + 1) > MAX_WORD_CELLS) {
    push("removed", x.slice(start, endX).join(""));
    push("added", y.slice(start, endY).join(""));
  } else {
    const lengths = new Uint32Array((n + 1) * (m + 1));
    const lcs = (/** @type {number} */ i, /** @type {number} */ j) => lengths[i * (m + 1) + j] ?? 0;
    for (let i = n - 1; i >= 0; i--)
      for (let j = m - 1; j >= 0; j--)
        lengths[i * (m + 1) + j] = x[start + i] === y[start + j] ? lcs(i + 1, j + 1) + 1 : Math.max(lcs(i + 1, j), lcs(i, j + 1));
    let i = 0;
    let j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && x[start + i] === y[start + j]) {
        push("same", x[start + i] ?? "");
        i++;
        j++;
      } else if (i < n && (j === m || lcs(i + 1, j) >= lcs(i, j + 1))) {
        push("removed", x[start + i] ?? "");
        i++;
      } else {
        push("added", y[start + j] ?? "");
        j++;
      }
    }
  }
  push("same", x.slice(endX).join(""));
  return ops;
}

/**
 * Where two JSON values differ, as JSON-pointer-like paths (`/resources/2`),
 * ignored fields left out. A value that is JSON text (tool arguments and
 * results are strings) is compared as the JSON it holds.
 * @param {unknown} a @param {unknown} b @param {string} [path] @returns {FieldChange[]}
 */
export function fieldChanges(a, b, path = "") {
  const left = parsed(a);
  const right = parsed(b);
  if (Array.isArray(left) && Array.isArray(right))
    return Array.from({ length: Math.max(left.length, right.length) }, (_, i) => fieldChanges(left[i], right[i], `${path}/${i}`)).flat();
  if (isObject(left) && isObject(right)) {
    const keys = [...new Set([...Object.keys(left), ...Object.keys(right)])].filter((key) => !ignoredField(key));
    return keys.flatMap((key) => fieldChanges(left[key], right[key], `${path}/${key}`));
  }
  return JSON.stringify(left) === JSON.stringify(right) ? [] : [{ path: path || "/", a: left, b: right }];
}

/** @param {unknown} value @returns {value is Record<string, unknown>} */
const isObject = (value) => typeof value === "object" && value !== null && !Array.isArray(value);

/** A string holding a JSON object or array is read as one; anything else is itself. @param {unknown} value */
function parsed(value) {
  if (typeof value !== "string" || !/^\s*[[{]/.test(value)) return value;
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}

/**
 * What each run's tool calls were given and answered, in the order they
 * started, and what its state was: each STATE_SNAPSHOT and STATE_DELTA in
 * order, and the state they leave at the end.
 * @param {Comparable} run
 */
export function payloadsOf(run) {
  /** @type {Map<string, { name: string, args: string, result: unknown }>} */
  const calls = new Map();
  /** @type {unknown[]} */
  const snapshots = [];
  /** @type {unknown[]} */
  const deltas = [];
  /** @type {unknown} */
  let state;
  for (const { event } of run.events) {
    const id = String(event.toolCallId ?? "");
    if (event.type === "TOOL_CALL_START") calls.set(id, { name: String(event.toolCallName ?? "tool"), args: "", result: undefined });
    else if (event.type === "TOOL_CALL_ARGS" && typeof event.delta === "string") {
      const call = calls.get(id);
      if (call) call.args += event.delta;
    } else if (event.type === "TOOL_CALL_RESULT") {
      const call = calls.get(id) ?? { name: "(started earlier)", args: "", result: undefined };
      call.result = event.content;
      calls.set(id, call);
    } else if (event.type === "STATE_SNAPSHOT") {
      snapshots.push(event.snapshot);
      state = event.snapshot;
    } else if (event.type === "STATE_DELTA") {
      deltas.push(event.delta);
      try {
        state = applyPatch(state ?? {}, event.delta);
      } catch {
        // A patch that does not apply leaves the state as it was (the thread state panel says so too).
      }
    }
  }
  return { calls: [...calls.values()], snapshots, deltas, state };
}

/**
 * The payload fields that differ between two runs, grouped by what holds them.
 * @param {Comparable} a @param {Comparable} b @returns {PayloadChange[]}
 */
export function payloadChanges(a, b) {
  const left = payloadsOf(a);
  const right = payloadsOf(b);
  /** @type {PayloadChange[]} */
  const groups = [];
  const add = (/** @type {string} */ label, /** @type {unknown} */ x, /** @type {unknown} */ y) => {
    const changes = fieldChanges(x, y);
    if (changes.length > 0) groups.push({ label, changes });
  };
  for (let i = 0; i < Math.max(left.calls.length, right.calls.length); i++) {
    const x = left.calls[i];
    const y = right.calls[i];
    const name = x?.name === y?.name || !x || !y ? (x ?? y)?.name : `${x.name} / ${y.name}`;
    add(`tool call ${i + 1} · ${name} · arguments`, x?.args, y?.args);
    add(`tool call ${i + 1} · ${name} · result`, x?.result, y?.result);
  }
  for (let i = 0; i < Math.max(left.snapshots.length, right.snapshots.length); i++)
    add(`STATE_SNAPSHOT ${i + 1}`, left.snapshots[i], right.snapshots[i]);
  for (let i = 0; i < Math.max(left.deltas.length, right.deltas.length); i++) add(`STATE_DELTA ${i + 1}`, left.deltas[i], right.deltas[i]);
  if (left.snapshots.length + left.deltas.length + right.snapshots.length + right.deltas.length > 0)
    add("state at the end", left.state, right.state);
  return groups;
}

/**
 * One side of a word diff: its own text, the words only it has marked, long
 * equal stretches folded to their first and last few words.
 * @param {WordOp[]} ops @param {"removed" | "added"} side
 */
export function wordSide(ops, side) {
  /** @type {(HTMLElement | string)[]} */
  const parts = [];
  ops.forEach((op, at) => {
    if (op.op === "same") {
      const words = tokens(op.text);
      const keep = 2 * CONTEXT_WORDS;
      if (words.length <= 2 * keep) return void parts.push(op.text);
      const head = at === 0 ? "" : words.slice(0, keep).join("");
      const tail = at === ops.length - 1 ? "" : words.slice(-keep).join("");
      parts.push(head, h("span", { class: "diff-elided", title: `${words.length - 2 * keep} tokens alike` }, "…"), tail);
    } else if (op.op === side) parts.push(h(side === "removed" ? "del" : "ins", { class: "diff-word" }, op.text));
  });
  return parts;
}

/** A value as one line of text: strings as they are, the rest as JSON. @param {unknown} value */
const shown = (value) => (value === undefined ? "(absent)" : typeof value === "string" ? value : JSON.stringify(value));

/** The payload changes as a section of the comparison. @param {PayloadChange[]} groups @param {string} nameA @param {string} nameB */
export function payloadView(groups, nameA, nameB) {
  return h(
    "div",
    { class: "diff-payloads" },
    h("h3", {}, "Payloads"),
    groups.map((group) =>
      h(
        "div",
        { class: "diff-payload" },
        h("p", { class: "diff-text-head" }, group.label),
        h(
          "dl",
          { class: "diff-fields" },
          group.changes.flatMap((change) => {
            const ops = wordDiff(shown(change.a), shown(change.b));
            return [
              h("dt", {}, h("code", {}, change.path)),
              h("dd", { class: "diff-removed", "aria-label": `${change.path} in ${nameA}` }, "− ", wordSide(ops, "removed")),
              h("dd", { class: "diff-added", "aria-label": `${change.path} in ${nameB}` }, "+ ", wordSide(ops, "added")),
            ];
          }),
        ),
      ),
    ),
  );
}
