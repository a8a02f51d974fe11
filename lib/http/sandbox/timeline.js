// @ts-check
/**
 * The timeline: one section per run, with a span chart (one bar per step,
 * message, tool call and reasoning span, placed on a time axis by the
 * events' timestamps) above the run's events, a virtual list that keeps
 * only the rows near the viewport in the DOM. Bars are updated in place as
 * events stream in, so focus and scroll position survive a busy stream.
 */
import { h } from "./dom.js";
import { EventList } from "./event-list.js";
import { summarize, subtype } from "./event-text.js";
import { spanName } from "./labels.js";
import { drawAxis, durationOf, formatMs, gapBefore, longestGaps, spanDuration, spanTime, timeOf } from "./time-axis.js";

/** @typedef {import("./run-model.js").RunModel} RunModel */
/** @typedef {import("./run-model.js").Span} Span */
/** @typedef {import("./run-model.js").EventEntry} EventEntry */
/** @typedef {(title: string, value: unknown) => void} Inspect */
/** @typedef {(entry: EventEntry) => boolean} EventFilter */

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

/** A span as plain text: its streamed text is the point, and JSON escaping would bury it. @param {Span} span @param {RunModel} model */
function describeSpan(span, model) {
  const { start, duration } = spanTime(model, span);
  const lines = [
    spanName(span, model),
    "",
    `kind: ${span.kind}`,
    `label: ${span.label}`,
    `events: #${span.start}–${span.end === undefined ? "(never closed)" : `#${span.end}`}`,
    `starts: ${formatMs(start)} after the first event`,
    `duration: ${formatMs(duration)}${span.end === undefined ? " so far" : ""}`,
  ];
  const took = spanDuration(model, span);
  if (took !== duration) lines.push(`step's duration: ${formatMs(took)} (finishedAt − startedAt, the kernel's clock)`);
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
    /** The selected event, which keeps its mark when its row scrolls out of the DOM and back. @type {EventEntry | undefined} */
    this.selectedEntry = undefined;
    /** @type {RunView[]} */
    this.views = [];
    /** @type {EventFilter} */
    this.matches = () => true;
    /** A find is in force: a run with no event it keeps is hidden whole, chart and all. */
    this.filtering = false;
    this.hiddenNote = h("p", { class: "filter-note", role: "status", hidden: true });
    root.addEventListener("keydown", (event) => this.#navigate(event));
  }

  clear() {
    this.count = 0;
    this.selected = undefined;
    this.selectedEntry = undefined;
    this.views = [];
    this.hiddenNote.hidden = true;
    this.root.replaceChildren();
  }

  /**
   * Shows only the events `matches` keeps, in every run, those to come included; while `active`, runs with none are hidden.
   * @param {EventFilter} matches @param {boolean} [active]
   */
  setFilter(matches, active = false) {
    this.matches = matches;
    this.filtering = active;
    for (const view of this.views) view.refilter();
    this.noteHidden();
  }

  /** Says how many runs the find hides, so an empty page never looks like an empty thread. */
  noteHidden() {
    const hidden = this.views.filter((view) => view.element.hidden).length;
    this.hiddenNote.hidden = hidden === 0;
    this.hiddenNote.textContent = `${hidden} run${hidden > 1 ? "s" : ""} with no matching event hidden: Clear shows ${hidden > 1 ? "them" : "it"}.`;
    if (hidden > 0 && this.hiddenNote.parentElement !== this.root) this.root.prepend(this.hiddenNote);
  }

  /** @param {RunModel} model */
  addRun(model) {
    const view = new RunView(model, ++this.count, this);
    this.views.push(view);
    this.root.querySelector(".empty")?.remove();
    this.root.append(view.element);
    view.element.scrollIntoView({ block: "nearest" });
    return view;
  }

  /** @param {Element} element @param {string} title @param {unknown} value @param {EventEntry} [entry] */
  select(element, title, value, entry) {
    this.selected?.removeAttribute("aria-current");
    element.setAttribute("aria-current", "true");
    this.selected = element;
    this.selectedEntry = entry;
    this.inspect(title, value);
  }

  /**
   * Arrow keys walk a run's events as in a list. Most rows are not in the DOM
   * (the list is virtual), so the step is taken on the run's entries and the
   * row brought in afterwards.
   * @param {KeyboardEvent} event
   */
  #navigate(event) {
    const target = event.target;
    if (!(target instanceof HTMLElement) || !target.classList.contains("ev")) return;
    const view = this.views[Number(target.dataset.run) - 1];
    const entry = view?.model.events[Number(target.dataset.index)];
    if (!view || !entry) return;
    const step = { ArrowDown: 1, ArrowUp: -1, PageDown: 20, PageUp: -20, Home: -Infinity, End: Infinity }[event.key];
    if (step === undefined) return;
    event.preventDefault();
    const next = view.events.neighbour(entry, step);
    const row = next && view.events.reveal(next);
    if (!row) return;
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
    /** @type {Map<Span, { bar: HTMLButtonElement, row: HTMLElement, name: HTMLElement, took: HTMLElement }>} */
    this.bars = new Map();
    /** @type {Map<EventEntry, HTMLButtonElement>} */
    this.ticks = new Map();
    /** The span whose events are marked in the list. @type {Span | undefined} */
    this.highlighted = undefined;
    this.frame = 0;
    /** The list was scrolled to its end when events came: keep following them. */
    this.following = false;
    /** Spans with at least one event the find keeps: the others are dimmed in the chart. @type {Set<Span>} */
    this.matchedSpans = new Set();
    this.status = h("span", { class: "pill" });
    this.meta = h("span", { class: "meta" });
    this.timing = h("span", { class: "timing" });
    this.spanRows = h("div", { class: "span-rows" });
    this.tickTrack = h("div", { class: "track" });
    this.tickRow = h(
      "div",
      { class: "span-row ticks", hidden: true },
      h("span", { class: "span-label" }, "pipeline events"),
      this.tickTrack,
    );
    this.axisTrack = h("div", { class: "track axis", role: "img" });
    this.axisRow = h("div", { class: "span-row axis-row" }, h("span", { class: "span-label" }, "time"), this.axisTrack);
    this.legend = h("p", { class: "axis-legend" });
    this.chart = h(
      "div",
      { class: "chart", role: "group", "aria-label": `Spans of run ${number}` },
      this.spanRows,
      this.tickRow,
      this.axisRow,
      this.legend,
    );
    this.events = new EventList(timeline.root, `Events of run ${number}`, (entry) => this.#row(entry));
    this.list = this.events.element;
    this.after = h("div", { class: "after" });
    const heading = h(
      "h2",
      {},
      h("span", { class: "run-number" }, `Run ${number}`),
      // Cut to the header's room by CSS, whole in the tooltip.
      h("span", { class: "run-title", title: model.title }, model.title),
      h("code", { class: "run-id", title: "runId" }, model.runId),
    );
    // The chart (and a pipeline's graph, which joins it) fold under one summary, and scroll within a modest height,
    // so the events start high on the screen; the summary carries the run's timing, folded or not.
    this.top = h(
      "details",
      { class: "run-top", open: true, hidden: true },
      h("summary", { title: "Show or hide the span chart" }, h("span", { class: "chart-title" }, "Spans"), this.timing),
      this.chart,
    );
    // Header and chart stick to the top while the run's events scroll under them, so the spans stay in view.
    const sticky = h("div", { class: "run-sticky" }, h("header", {}, heading, this.status, this.meta), this.top);
    this.element = h("section", { class: "run", "aria-label": `Run ${number}: ${model.title}` }, sticky, this.list, this.after);
    this.update();
  }

  /** @param {EventEntry} entry */
  addEvent(entry) {
    if (!this.frame) {
      const scroller = this.timeline.root;
      // A run follows its stream from its first event (someone just started it), and goes on while the view stays at the end.
      this.following = entry.index === 0 || scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 48;
    }
    if (this.timeline.matches(entry)) {
      this.events.push(entry);
      if (entry.span) this.matchedSpans.add(entry.span);
      if (this.element.hidden) {
        this.element.hidden = false;
        this.timeline.noteHidden();
      }
    }
    if (entry.tone === "pipeline") this.ticks.set(entry, this.#tick(entry));
    this.#scheduleFrame();
  }

  /** The list again, through the timeline's current filter. */
  refilter() {
    const shown = this.model.events.filter(this.timeline.matches);
    this.matchedSpans = new Set(shown.flatMap((entry) => (entry.span ? [entry.span] : [])));
    this.element.hidden = this.timeline.filtering && shown.length === 0 && this.model.events.length > 0;
    this.events.setEntries(shown);
    this.update();
    this.renderChart();
  }

  /** Status, counts, timing and anything to say after the events (an error, a refusal). */
  update() {
    const { model } = this;
    this.status.textContent = STATUS_TEXT[model.status];
    this.status.className = `pill status-${model.status}`;
    const heartbeats = model.heartbeats ? ` · ${model.heartbeats} heartbeat${model.heartbeats > 1 ? "s" : ""}` : "";
    const shown = this.events.shown.length === model.events.length ? "" : ` (${this.events.shown.length} shown)`;
    this.meta.textContent = `${model.events.length} events${shown} · ${model.spans.length} spans · ${seconds(model.elapsedMs)}${heartbeats}`;
    this.#updateTiming();
    if (model.detail && !this.after.querySelector(".run-detail")) {
      const detail = h("p", { class: `run-detail status-${model.status}` }, model.detail);
      this.after.prepend(detail);
      detail.scrollIntoView({ block: "nearest" });
    }
  }

  /** The three numbers a stream debugger asks first: how long until anything came, how long it all took, and the longest silence. */
  #updateTiming() {
    const { model } = this;
    const first = model.events[0];
    if (!first) {
      this.timing.textContent = "";
      return;
    }
    const [gap] = longestGaps(model, 1);
    this.timing.replaceChildren(
      h("span", { class: "first-event" }, `first event after ${formatMs(first.at)}`),
      h("span", {}, `${formatMs(durationOf(model))} from first to last`),
      ...(gap ? [h("span", { class: "longest-gap" }, `longest gap ${formatMs(gap.ms)} (#${gap.from.index} → #${gap.to.index})`)] : []),
    );
  }

  /** @param {HTMLElement} element */
  attach(element) {
    this.after.append(element);
  }

  /** One event's row, made when it scrolls into the list's window. @param {EventEntry} entry */
  #row(entry) {
    const { event } = entry;
    const kind = subtype(event);
    const gap = gapBefore(this.model, entry);
    const row = h(
      "button",
      {
        type: "button",
        class: `ev tone-${entry.tone}${entry.span !== undefined && entry.span === this.highlighted ? " in-span" : ""}`,
        style: { "--depth": String(entry.depth) },
        "data-run": this.number,
        "data-index": entry.index,
        "aria-current": this.timeline.selectedEntry === entry ? "true" : undefined,
        onclick: () => this.#selectEvent(entry, row),
      },
      h("span", { class: "ev-index" }, `#${entry.index}`),
      h("span", { class: "ev-time", title: "since the request was sent" }, `+${Math.round(entry.at)} ms`),
      h(
        "span",
        { class: `ev-gap${gap >= 1000 ? " long" : ""}`, title: "since the event before, by timestamp" },
        gap ? `Δ${formatMs(gap)}` : "",
      ),
      h("span", { class: "ev-type" }, String(event.type)),
      kind ? h("span", { class: `ev-sub${entry.tone === "pipeline" ? " pipeline" : ""}` }, kind) : null,
      h("span", { class: "ev-summary" }, summarize(event)),
    );
    if (this.timeline.selectedEntry === entry) this.timeline.selected = row;
    return row;
  }

  /** @param {EventEntry} entry @param {HTMLElement} row */
  #selectEvent(entry, row) {
    this.timeline.select(row, `Run ${this.number} · #${entry.index} ${entry.event.type}`, entry.event, entry);
    this.#highlight(entry.span);
  }

  /** @param {Span} span @param {HTMLElement} bar */
  #selectSpan(span, bar) {
    const range = span.end === undefined ? `#${span.start}, never closed` : `#${span.start}–#${span.end}`;
    this.timeline.select(bar, `Run ${this.number} · ${spanName(span, this.model)} · ${range}`, describeSpan(span, this.model));
    this.#highlight(span);
  }

  /** Marks the rows of one span, so its events stand out among interleaved ones. @param {Span | undefined} span */
  #highlight(span) {
    this.highlighted = span;
    for (const row of this.events.visibleRows()) {
      const entry = this.model.events[Number(row.dataset.index)];
      row.classList.toggle("in-span", span !== undefined && entry?.span === span);
    }
  }

  /** @param {EventEntry} entry */
  #tick(entry) {
    const tick = h("button", {
      type: "button",
      class: "tick",
      title: `#${entry.index} ${subtype(entry.event)}`,
      "aria-label": `pipeline event #${entry.index}: ${subtype(entry.event)}`,
      onclick: () => {
        const row = this.events.reveal(entry);
        if (row) this.#selectEvent(entry, row);
      },
    });
    this.tickTrack.append(tick);
    this.tickRow.hidden = false;
    return tick;
  }

  // Streams can bring dozens of events per frame: lay out the chart, the counts and the list once per frame.
  #scheduleFrame() {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.renderChart();
      this.update();
      const scroller = this.timeline.root;
      if (this.following) scroller.scrollTop = scroller.scrollHeight;
      this.events.render();
    });
  }

  renderChart() {
    const { model } = this;
    const duration = Math.max(durationOf(model), 1);
    const percent = (/** @type {number} */ ms) => `${((ms / duration) * 100).toFixed(3)}%`;
    for (const span of model.spans) {
      let drawn = this.bars.get(span);
      if (!drawn) {
        const bar = h("button", { type: "button", class: `bar kind-${span.kind}`, onclick: () => this.#selectSpan(span, bar) });
        const name = h("span", { class: "name" });
        const took = h("span", { class: "took" });
        // The tooltip keeps the span's own label (an id, for some), which the name no longer shows.
        const label = h(
          "span",
          { class: `span-label kind-${span.kind}`, title: span.label },
          h("span", { class: "kind", "aria-hidden": "true" }),
          name,
          took,
        );
        const row = h("div", { class: "span-row" }, label, h("div", { class: "track" }, bar));
        drawn = { bar, row, name, took };
        this.bars.set(span, drawn);
        this.spanRows.append(row);
      }
      const { bar, row, name, took } = drawn;
      // Nesting can change while spans close (a message outliving its step moves out from under it).
      const depth = model.depthOf(span);
      row.style.setProperty("--depth", String(depth));
      const spoken = spanName(span, model);
      name.textContent = spoken;
      const time = spanTime(model, span);
      took.textContent = formatMs(spanDuration(model, span));
      bar.style.left = percent(time.start);
      bar.style.width = percent(time.duration);
      bar.classList.toggle("open", span.end === undefined);
      bar.classList.toggle("failed", span.failed);
      bar.classList.toggle("resumed", span.resumed);
      row.classList.toggle("dim", this.timeline.filtering && !this.matchedSpans.has(span));
      const range = span.end === undefined ? `from event ${span.start}, still open` : `events ${span.start} to ${span.end}`;
      const when = `${formatMs(time.duration)} from ${formatMs(time.start)}`;
      bar.setAttribute("aria-label", `${spoken}, ${range}, ${when}${span.failed ? ", failed" : ""}`);
      bar.title = `${spoken} (${span.label}) · ${range} · ${when}`;
    }
    for (const [entry, tick] of this.ticks) {
      tick.style.left = `calc(${percent(timeOf(model, entry))} - 4px)`;
      tick.classList.toggle("dim", this.timeline.filtering && !this.timeline.matches(entry));
    }
    drawAxis(this.axisTrack, this.legend, model);
    this.top.hidden = model.events.length === 0;
  }
}
