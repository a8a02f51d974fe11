// @ts-check
/**
 * Keep: a run saved to disk (its events as JSON lines, or its SSE body as
 * received), a saved run or a recorded A2A fixture opened from disk, and
 * two runs compared. A saved run opens as a run section like a live one; a
 * fixture is replayed by the service (`POST /sandbox/replay`), which
 * projects its frames as it would a kernel's, so what comes back is the
 * stream a client would have seen.
 */
import { answerLabel } from "./labels.js";
import { h } from "./dom.js";
import { errorText, sseRecords } from "./sse.js";
import { chatPane } from "./chat-pane.js";
import { pipelineView } from "./pipeline-view.js";
import { diffView } from "./run-diff.js";

/** @typedef {import("./run-model.js").RunModel} RunModel */
/** @typedef {{ element: HTMLElement, number: number, model: RunModel }} View */
/** @typedef {{ kind: "events", events: Record<string, any>[], raw: string[] } | { kind: "fixture", text: string }} RunFile */

/** What the page refuses to read into memory; the replay route takes 8 MiB, and a saved run of 5,000 events is about 1 MiB. */
export const MAX_FILE_BYTES = 32 * 1024 * 1024;

/** Every run on the page, for the comparison. @type {{ view: View, sse: string[] }[]} */
const kept = [];

/** @param {RunModel} model */
export const toJsonLines = (model) => model.events.map((entry) => `${JSON.stringify(entry.event)}\n`).join("");

/** The SSE body as received; a run opened from JSON lines never had one, so its events are written as the service writes them. @param {RunModel} model @param {string[]} sse */
export const toSse = (model, sse) =>
  sse.length > 0
    ? sse.map((record) => `${record}\n\n`).join("")
    : model.events.map((entry) => `data: ${JSON.stringify(entry.event)}\n\n`).join("");

/** @param {string} line */
function parseJsonLine(line) {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}

/**
 * What a file holds, told from its content, not its name: SSE records
 * (`data:` lines, `:` comments), AG-UI events one JSON object a line (or a
 * JSON array of them), or a recorded A2A fixture (`delayMs`/`frame`/`turn`
 * lines, `#` comments).
 * @param {string} text @returns {RunFile}
 */
export function readRunFile(text) {
  const lines = text.split(/\r?\n/);
  const first = lines.find((line) => line.trim() !== "" && !line.startsWith("#"))?.trim() ?? "";
  if (/^(data|event|id|retry)?:/.test(first) || first.startsWith(":")) {
    const raw = text
      .replace(/\r\n/g, "\n")
      .split(/\n\n+/)
      .filter((record) => record.trim() !== "");
    const events = raw
      .map((record) =>
        record
          .split("\n")
          .filter((line) => line.startsWith("data:"))
          .map((line) => line.slice(5).replace(/^ /, ""))
          .join("\n"),
      )
      .filter((data) => data !== "")
      .map(parseJsonLine)
      .filter((event) => event && typeof event.type === "string");
    return { kind: "events", events, raw };
  }
  if (first.startsWith("[")) {
    const all = parseJsonLine(text);
    if (Array.isArray(all)) return { kind: "events", events: all.filter((event) => event && typeof event.type === "string"), raw: [] };
  }
  const value = parseJsonLine(first);
  if (value && typeof value === "object" && ["delayMs", "frame", "turn", "error", "drop"].some((key) => key in value)) {
    return { kind: "fixture", text };
  }
  const events = lines.filter((line) => line.trim() !== "").map(parseJsonLine);
  if (events.length > 0 && events.every((event) => event && typeof event.type === "string")) return { kind: "events", events, raw: [] };
  throw new Error("this is neither a saved run (JSON lines or SSE) nor a recorded A2A fixture");
}

/** Milliseconds since the run's first event, from the service's timestamps (a saved run has no receive times). @param {Record<string, any>[]} events */
export function offsetsOf(events) {
  const first = events.find((event) => typeof event.timestamp === "number")?.timestamp;
  let last = 0;
  return events.map((event) => (last = typeof event.timestamp === "number" && first !== undefined ? event.timestamp - first : last));
}

/** @param {string} name @param {string} text @param {string} type */
function download(name, text, type) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = h("a", { href: url, download: name, hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** A file name from the run's title and id: what a person would recognise in their downloads. @param {View} view @param {string} extension */
const fileName = (view, extension) =>
  `run-${view.number}-${`${view.model.title}`.replace(/[^A-Za-z0-9_-]+/g, "-").replace(/^-|-$/g, "") || "run"}.${extension}`;

/**
 * Gives a run its Keep buttons and its pipeline view, and remembers it for
 * the comparison. Returns what the page's stream loop feeds.
 * @param {View} view
 */
export function keepRun(view) {
  const record = { view, sse: /** @type {string[]} */ ([]) };
  kept.push(record);
  const graph = pipelineView(view);
  chatPane(view);
  const buttons = h(
    "span",
    { class: "keep-buttons" },
    h(
      "button",
      { type: "button", class: "small", onclick: () => download(fileName(view, "jsonl"), toJsonLines(view.model), "application/jsonl") },
      "Save JSONL",
    ),
    h(
      "button",
      {
        type: "button",
        class: "small",
        onclick: () => download(fileName(view, "sse"), toSse(view.model, record.sse), "text/event-stream"),
      },
      "Save SSE",
    ),
  );
  view.element.querySelector("header")?.append(buttons);
  refreshChoices();
  return {
    /** An SSE record's text as it came off the wire. @param {string} raw */
    received: (raw) => void record.sse.push(raw),
    /** Draws the graph now, for a run filled at once (from a file). */
    sync: graph.sync,
  };
}

/** @type {{ a: HTMLSelectElement, b: HTMLSelectElement, compare: HTMLButtonElement } | undefined} */
let choices;

function refreshChoices() {
  if (!choices) return;
  for (const [select, fallback] of /** @type {const} */ ([
    [choices.a, kept.length - 2],
    [choices.b, kept.length - 1],
  ])) {
    const previous = select.value;
    select.replaceChildren(...kept.map(({ view }, at) => h("option", { value: String(at) }, `Run ${view.number} · ${view.model.title}`)));
    select.value = previous && Number(previous) < kept.length ? previous : String(Math.max(fallback, 0));
  }
  choices.compare.disabled = kept.length < 2;
}

/** Forgets the runs of a cleared page. */
export function forgetRuns() {
  kept.length = 0;
  refreshChoices();
}

/**
 * The later turns a fixture has sections for (`{"turn": N, "when"?: "…"}`
 * lines), in file order: what a replay that pauses can go on with.
 * @param {string} text @returns {{ turn: number, when: string | undefined }[]}
 */
export function laterTurns(text) {
  return text
    .split(/\r?\n/)
    .map((line) => (line.trim().startsWith("{") ? parseJsonLine(line.trim()) : undefined))
    .filter((value) => value && Number.isInteger(value.turn) && value.turn > 0)
    .map((value) => ({ turn: value.turn, when: typeof value.when === "string" ? value.when : undefined }));
}

/**
 * A fixture replayed by the service, at its recorded pace, into a new run
 * section. Not a run of the page's thread: a pause cannot be answered, but
 * the fixture's later turns can be replayed, each section as the answer
 * that picks it would.
 * @param {Parameters<typeof keepControls>[0]} page @param {string} text @param {string} name
 * @param {{ turn: number, when: string | undefined }} [section]
 */
async function replay(page, text, name, section = { turn: 0, when: undefined }) {
  const title =
    section.turn === 0
      ? `replay · ${name}`
      : `replay · ${name} · turn ${section.turn}${section.when ? ` · ${answerLabel(section.when)}` : ""}`;
  const model = page.newModel(title);
  const view = page.timeline.addRun(model);
  const tools = keepRun(view);
  page.adopt(view);
  const started = performance.now();
  try {
    const response = await fetch("/sandbox/replay", {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream", ...page.headers() },
      body: JSON.stringify({ fixture: text, turn: section.turn, answer: section.when ?? "" }),
    });
    if (!response.ok || !response.body || !(response.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
      model.status = "refused";
      model.detail = `HTTP ${response.status}: ${errorText(await response.text())}`;
      return;
    }
    for await (const record of sseRecords(response.body)) {
      tools.received(record.raw);
      if (record.data === undefined) continue;
      const event = parseJsonLine(record.data);
      if (event) view.addEvent(model.add(event, performance.now() - started));
    }
    if (model.status === "streaming") {
      model.status = "cut";
      model.detail = "The replay ended without RUN_FINISHED or RUN_ERROR.";
    }
  } catch (error) {
    model.status = "cut";
    model.detail = `The replay failed: ${error}`;
  } finally {
    model.elapsedMs = performance.now() - started;
    view.update();
    view.renderChart();
    const failed = ["error", "refused", "cut"].includes(model.status);
    page.say(`Replay of ${name}: ${model.status}${failed && model.detail ? `. ${model.detail}` : "."}`, failed ? "error" : "info");
    page.settled();
  }
  const next = laterTurns(text).filter((later) => later.turn === section.turn + 1);
  if (model.status === "interrupt" && next.length > 0)
    view.attach(
      h(
        "div",
        { class: "replay-turns" },
        h("p", {}, "A replay cannot be answered; play the fixture's next turn instead:"),
        next.map((later) =>
          h(
            "button",
            { type: "button", onclick: () => void replay(page, text, name, later) },
            `Replay turn ${later.turn}${later.when ? ` · ${answerLabel(later.when)}` : ""}`,
          ),
        ),
      ),
    );
}

/**
 * The page's Keep controls: open a file, compare two runs.
 * @param {{
 *   open: HTMLInputElement,
 *   compareA: HTMLSelectElement,
 *   compareB: HTMLSelectElement,
 *   compare: HTMLButtonElement,
 *   timeline: { root: HTMLElement, addRun: (model: RunModel) => View & { addEvent(entry: any): void, update(): void, renderChart(): void, attach(element: HTMLElement): void } },
 *   newModel: (title: string) => RunModel,
 *   headers: () => Record<string, string>,
 *   say: (message: string, tone?: "info" | "error" | "busy") => void,
 *   adopt: (view: View) => void,
 *   settled: () => void,
 * }} page
 */
export function keepControls(page) {
  choices = { a: page.compareA, b: page.compareB, compare: page.compare };
  refreshChoices();

  page.open.addEventListener("change", async () => {
    const file = page.open.files?.[0];
    page.open.value = "";
    if (!file) return;
    if (file.size > MAX_FILE_BYTES)
      return page.say(`${file.name} is larger than ${MAX_FILE_BYTES / 1024 / 1024} MiB: not opened.`, "error");
    /** @type {RunFile} */
    let content;
    try {
      content = readRunFile(await file.text());
    } catch (error) {
      return page.say(`${file.name}: ${error instanceof Error ? error.message : error}.`, "error");
    }
    if (content.kind === "fixture") {
      page.say(`Replaying the A2A fixture ${file.name} through the service…`, "busy");
      await replay(page, content.text, file.name);
      return;
    }
    const model = page.newModel(`opened · ${file.name}`);
    const started = content.events.find((event) => event.type === "RUN_STARTED");
    if (typeof started?.runId === "string") model.runId = started.runId;
    const view = page.timeline.addRun(model);
    const tools = keepRun(view);
    page.adopt(view);
    for (const raw of content.raw) tools.received(raw);
    const offsets = offsetsOf(content.events);
    content.events.forEach((event, index) => view.addEvent(model.add(event, offsets[index] ?? 0)));
    // A saved run that stopped mid-stream says so, as a live one would.
    if (model.status === "streaming") {
      model.status = "cut";
      model.detail = "The saved run ends without RUN_FINISHED or RUN_ERROR.";
    }
    view.update();
    view.renderChart();
    tools.sync();
    page.say(`Opened ${file.name}: ${content.events.length} events.`);
    page.settled();
  });

  page.compare.addEventListener("click", () => {
    const a = kept[Number(page.compareA.value)]?.view;
    const b = kept[Number(page.compareB.value)]?.view;
    if (!a || !b) return;
    const section = diffView(a.model, b.model, `Run ${a.number}`, `Run ${b.number}`);
    page.timeline.root.querySelector(".empty")?.remove();
    page.timeline.root.append(section);
    section.scrollIntoView({ block: "nearest" });
    page.say(section.querySelector(".diff-summary")?.textContent ?? "");
  });
}
