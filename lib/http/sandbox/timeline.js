// @ts-check
/**
 * The timeline: one section per run, with a span chart (one bar per step,
 * message, tool call and reasoning span, placed by event number) above the
 * run's events. Rows and bars are updated in place as events stream in, so
 * focus and scroll position survive a busy stream.
 */
import { h } from "./dom.js";
import { summarize, subtype } from "./event-text.js";

/** @typedef {import("./run-model.js").RunModel} RunModel */
/** @typedef {import("./run-model.js").Span} Span */
/** @typedef {import("./run-model.js").EventEntry} EventEntry */
/** @typedef {(title: string, value: unknown) => void} Inspect */

const STATUS_TEXT = {
  streaming: "streaming…",
  success: "finished",
  interrupt: "waiting for an answer",
  answered: "answered",
  error: "run error",
  refused: "refused",
  cut: "stream cut short",
  stopped: "stopped",
};

/** JSON tool arguments and results read better pretty-printed; anything else is shown as it came. @param {string} text */
function pretty(text) {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/** A span as plain text: its streamed text is the point, and JSON escaping would bury it. @param {Span} span */
function describeSpan(span) {
  const lines = [
    `kind: ${span.kind}`,
    `label: ${span.label}`,
    `events: #${span.start}–${span.end === undefined ? "(never closed)" : `#${span.end}`}`,
  ];
  if (span.kind === "tool")
    lines.push(
      `failed: ${span.failed}`,
      "",
      "arguments:",
      pretty(span.text),
      "",
      "result:",
      span.result === undefined ? "(none yet)" : pretty(span.result),
    );
  else if (span.kind !== "step") lines.push("", "text:", span.text);
  return lines.join("\n");
}

/**
 * Span names differ in the middle as often as at the end (candidate:subp-generate-0:draft, -1:draft), so cut the middle.
 * @param {string} text @param {number} max
 */
function middleEllipsis(text, max) {
  if (text.length <= max) return text;
  const head = Math.ceil((max - 1) / 2);
  return `${text.slice(0, head)}…${text.slice(text.length - (max - 1 - head))}`;
}

/** @param {number} ms */
const seconds = (ms) => `${(ms / 1000).toFixed(2)} s`;

export class Timeline {
  /** @param {HTMLElement} root @param {Inspect} inspect */
  constructor(root, inspect) {
    this.root = root;
    this.inspect = inspect;
    this.count = 0;
    /** @type {Element | undefined} */
    this.selected = undefined;
    root.addEventListener("keydown", (event) => this.#navigate(event));
  }

  clear() {
    this.count = 0;
    this.selected = undefined;
    this.root.replaceChildren();
  }

  /** @param {RunModel} model */
  addRun(model) {
    const view = new RunView(model, ++this.count, this);
    this.root.querySelector(".empty")?.remove();
    this.root.append(view.element);
    view.element.scrollIntoView({ block: "nearest" });
    return view;
  }

  /** @param {Element} element @param {string} title @param {unknown} value */
  select(element, title, value) {
    this.selected?.removeAttribute("aria-current");
    element.setAttribute("aria-current", "true");
    this.selected = element;
    this.inspect(title, value);
  }

  /** Arrow keys walk the event rows of every run, as in a list. @param {KeyboardEvent} event */
  #navigate(event) {
    const target = event.target;
    if (!(target instanceof HTMLElement) || !target.classList.contains("ev")) return;
    const rows = [...this.root.querySelectorAll(".ev")];
    const at = rows.indexOf(target);
    const next = { ArrowDown: at + 1, ArrowUp: at - 1, Home: 0, End: rows.length - 1 }[event.key];
    const row = next === undefined ? undefined : rows[next];
    if (!(row instanceof HTMLElement)) return;
    event.preventDefault();
    row.focus();
    row.click();
  }
}

class RunView {
  /** @param {RunModel} model @param {number} number @param {Timeline} timeline */
  constructor(model, number, timeline) {
    this.model = model;
    this.number = number;
    this.timeline = timeline;
    /** @type {Map<Span, { bar: HTMLButtonElement, row: HTMLElement, name: HTMLElement }>} */
    this.bars = new Map();
    /** @type {Map<EventEntry, HTMLButtonElement>} */
    this.ticks = new Map();
    this.frame = 0;
    this.status = h("span", { class: "pill" });
    this.meta = h("span", { class: "meta" });
    this.spanRows = h("div", { class: "span-rows" });
    this.tickTrack = h("div", { class: "track" });
    this.tickRow = h(
      "div",
      { class: "span-row ticks", hidden: true },
      h("span", { class: "span-label" }, "pipeline events"),
      this.tickTrack,
    );
    this.chart = h(
      "div",
      { class: "chart", role: "group", "aria-label": `Spans of run ${number}`, hidden: true },
      this.spanRows,
      this.tickRow,
    );
    this.list = h("ol", { class: "events", "aria-label": `Events of run ${number}` });
    this.after = h("div", { class: "after" });
    const heading = h(
      "h2",
      {},
      h("span", { class: "run-number" }, `Run ${number}`),
      h("span", { class: "run-title" }, model.title),
      h("code", { class: "run-id", title: "runId" }, model.runId),
    );
    // Header and chart stick to the top while the run's events scroll under them, so the spans stay in view.
    const top = h("div", { class: "run-top" }, h("header", {}, heading, this.status, this.meta), this.chart);
    this.element = h("section", { class: "run", "aria-label": `Run ${number}: ${model.title}` }, top, this.list, this.after);
    this.update();
  }

  /** @param {EventEntry} entry */
  addEvent(entry) {
    const scroller = this.timeline.root;
    const pinned = scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 48;
    const { event } = entry;
    const kind = subtype(event);
    const row = h(
      "button",
      {
        type: "button",
        class: `ev tone-${entry.tone}`,
        style: { "--depth": String(entry.depth) },
        onclick: () => this.#selectEvent(entry, row),
      },
      h("span", { class: "ev-index" }, `#${entry.index}`),
      h("span", { class: "ev-time" }, `+${Math.round(entry.at)} ms`),
      h("span", { class: "ev-type" }, String(event.type)),
      kind ? h("span", { class: `ev-sub${entry.tone === "pipeline" ? " pipeline" : ""}` }, kind) : null,
      h("span", { class: "ev-summary" }, summarize(event)),
    );
    this.list.append(h("li", {}, row));
    if (entry.tone === "pipeline") this.ticks.set(entry, this.#tick(entry, row));
    this.#scheduleChart();
    this.update();
    if (pinned) scroller.scrollTop = scroller.scrollHeight;
  }

  /** Status, counts and anything to say after the events (an error, a refusal). */
  update() {
    const { model } = this;
    this.status.textContent = STATUS_TEXT[model.status];
    this.status.className = `pill status-${model.status}`;
    const heartbeats = model.heartbeats ? ` · ${model.heartbeats} heartbeat${model.heartbeats > 1 ? "s" : ""}` : "";
    this.meta.textContent = `${model.events.length} events · ${model.spans.length} spans · ${seconds(model.elapsedMs)}${heartbeats}`;
    if (model.detail && !this.after.querySelector(".run-detail")) {
      const detail = h("p", { class: `run-detail status-${model.status}` }, model.detail);
      this.after.prepend(detail);
      detail.scrollIntoView({ block: "nearest" });
    }
  }

  /** @param {HTMLElement} element */
  attach(element) {
    this.after.append(element);
  }

  /** @param {EventEntry} entry @param {HTMLElement} row */
  #selectEvent(entry, row) {
    this.timeline.select(row, `Run ${this.number} · #${entry.index} ${entry.event.type}`, entry.event);
    this.#highlight(entry.span);
  }

  /** @param {Span} span @param {HTMLElement} bar */
  #selectSpan(span, bar) {
    const range = span.end === undefined ? `#${span.start}, never closed` : `#${span.start}–#${span.end}`;
    this.timeline.select(bar, `Run ${this.number} · ${span.kind} ${span.label} · ${range}`, describeSpan(span));
    this.#highlight(span);
  }

  /** Marks the rows of one span, so its events stand out among interleaved ones. @param {Span | undefined} span */
  #highlight(span) {
    const rows = this.list.querySelectorAll(".ev");
    this.model.events.forEach((entry, index) => rows[index]?.classList.toggle("in-span", span !== undefined && entry.span === span));
  }

  /** @param {EventEntry} entry @param {HTMLElement} row */
  #tick(entry, row) {
    const tick = h("button", {
      type: "button",
      class: "tick",
      title: `#${entry.index} ${subtype(entry.event)}`,
      "aria-label": `pipeline event #${entry.index}: ${subtype(entry.event)}`,
      onclick: () => {
        row.scrollIntoView({ block: "nearest" });
        this.#selectEvent(entry, row);
      },
    });
    this.tickTrack.append(tick);
    this.tickRow.hidden = false;
    return tick;
  }

  // Streams can bring dozens of events per frame: lay the chart out once per frame.
  #scheduleChart() {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.renderChart();
    });
  }

  renderChart() {
    const { model } = this;
    const total = Math.max(model.events.length, 1);
    const percent = (/** @type {number} */ n) => `${((n / total) * 100).toFixed(3)}%`;
    for (const span of model.spans) {
      let drawn = this.bars.get(span);
      if (!drawn) {
        const bar = h("button", { type: "button", class: `bar kind-${span.kind}`, onclick: () => this.#selectSpan(span, bar) });
        const name = h("span", { class: "name" });
        const label = h(
          "span",
          { class: `span-label kind-${span.kind}`, title: span.label },
          h("span", { class: "kind" }, span.kind),
          name,
        );
        const row = h("div", { class: "span-row" }, label, h("div", { class: "track" }, bar));
        drawn = { bar, row, name };
        this.bars.set(span, drawn);
        this.spanRows.append(row);
      }
      const { bar, row, name } = drawn;
      // Nesting can change while spans close (a message outliving its step moves out from under it).
      const depth = model.depthOf(span);
      row.style.setProperty("--depth", String(depth));
      // Each level of nesting takes about three characters of the label column.
      name.textContent = middleEllipsis(span.label, 28 - 3 * depth);
      const last = span.end ?? total - 1;
      bar.style.left = percent(span.start);
      bar.style.width = percent(last - span.start + 1);
      bar.classList.toggle("open", span.end === undefined);
      bar.classList.toggle("failed", span.failed);
      bar.classList.toggle("resumed", span.resumed);
      const range = span.end === undefined ? `from event ${span.start}, still open` : `events ${span.start} to ${span.end}`;
      bar.setAttribute("aria-label", `${span.kind} ${span.label}, ${range}${span.failed ? ", failed" : ""}`);
      bar.title = `${span.kind} ${span.label} · ${range}`;
    }
    for (const [entry, tick] of this.ticks) tick.style.left = `calc(${percent(entry.index + 0.5)} - 4px)`;
    this.chart.hidden = model.spans.length === 0 && this.ticks.size === 0;
  }
}
