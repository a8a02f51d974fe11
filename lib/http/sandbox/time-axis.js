// @ts-check
/**
 * A run's time, read from the events' own `timestamp` (the service stamps
 * every event with its clock, in milliseconds) rather than their numbers:
 * a tool that thinks for ten seconds then takes ten seconds of the chart,
 * not one row. A stream without timestamps falls back to arrival times.
 */
import { runErrorText } from "./labels.js";
import { h } from "./dom.js";
import { PIPELINE_EVENT } from "./run-model.js";

/** @typedef {import("./run-model.js").RunModel} RunModel */
/** @typedef {import("./run-model.js").EventEntry} EventEntry */
/** @typedef {import("./run-model.js").Span} Span */

/**
 * A gap is marked when it stands out from the stream's own rhythm: several
 * times its typical (median) spacing, and a visible share of the run. A
 * steadily paced stream, however slow, then has none.
 */
const NOTABLE_SHARE = 0.08;
const NOTABLE_TIMES_TYPICAL = 4;
const MARKED_GAPS = 3;

/** @param {number} ms */
export function formatMs(ms) {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

/** Milliseconds from the run's first event to this one. @param {RunModel} model @param {EventEntry} entry */
export function timeOf(model, entry) {
  const first = model.events[0];
  if (!first) return 0;
  const [from, to] = [first.event.timestamp, entry.event.timestamp];
  if (typeof from === "number" && typeof to === "number") return Math.max(0, to - from);
  return Math.max(0, entry.at - first.at);
}

/** From the first event to the last. @param {RunModel} model */
export function durationOf(model) {
  const last = model.events.at(-1);
  return last ? timeOf(model, last) : 0;
}

/**
 * Where a span starts and how long it lasted; a span still open lasts until the last event so far.
 * @param {RunModel} model @param {Span} span
 */
export function spanTime(model, span) {
  const at = (/** @type {number} */ index) => {
    const entry = model.events[index];
    return entry ? timeOf(model, entry) : durationOf(model);
  };
  const start = at(span.start);
  const end = span.end === undefined ? durationOf(model) : at(span.end);
  return { start, duration: end - start };
}

/**
 * How long a span took, as its label says it. A finished pipeline step says it itself: its `durationMs`, the one rule
 * the feed keeps (finishedAt − startedAt on the kernel's clock, docs/pipeline-feed.md), so the chart, the events and the
 * graph give one number. Anything else takes what the stream's own times say.
 * @param {RunModel} model @param {Span} span
 */
export function spanDuration(model, span) {
  const finish = span.kind === "step" && span.end !== undefined ? model.events[span.end]?.event : undefined;
  const stepDurationMs = finish?.metadata?.["iac-code"]?.step?.durationMs;
  return typeof stepDurationMs === "number" ? stepDurationMs : spanTime(model, span).duration;
}

/** The silence before each event, by index: what a stream debugger looks for first. @param {RunModel} model @param {EventEntry} entry */
export function gapBefore(model, entry) {
  const previous = model.events[entry.index - 1];
  return previous ? timeOf(model, entry) - timeOf(model, previous) : 0;
}

/** The longest silences of a run, longest first. @param {RunModel} model @param {number} count */
export function longestGaps(model, count) {
  /** @type {{ from: EventEntry, to: EventEntry, ms: number }[]} */
  const gaps = [];
  for (const entry of model.events.slice(1)) {
    const ms = gapBefore(model, entry);
    const from = model.events[entry.index - 1];
    if (from && ms > 0) gaps.push({ from, to: entry, ms });
  }
  return gaps.sort((a, b) => b.ms - a.ms).slice(0, count);
}

/** Events closer than this came in one burst (one frame of the kernel's, say): one moment, not a rhythm. */
const BURST_MS = 5;

/** The middle of the stream's spacings between its moments: its rhythm. @param {RunModel} model */
export function typicalGap(model) {
  const gaps = model.events
    .slice(1)
    .map((entry) => gapBefore(model, entry))
    .filter((ms) => ms >= BURST_MS)
    .sort((a, b) => a - b);
  return gaps.length ? (gaps[Math.floor((gaps.length - 1) / 2)] ?? 0) : 0;
}

/** The gaps worth hatching on the axis, longest first. @param {RunModel} model */
export function notableGaps(model) {
  const floor = Math.max(durationOf(model) * NOTABLE_SHARE, typicalGap(model) * NOTABLE_TIMES_TYPICAL);
  return longestGaps(model, MARKED_GAPS).filter((gap) => gap.ms >= floor && gap.ms > 0);
}

/**
 * Where the stream broke, if it did: a stream that stopped without RUN_FINISHED or RUN_ERROR (dropped, or stopped from
 * the page), a run that ended in RUN_ERROR, and each re-attach after a dropped kernel stream (the recovery snapshot).
 * @param {RunModel} model
 * @returns {{ kind: "dropped" | "stopped" | "error" | "reattached", entry: EventEntry, text: string }[]}
 */
export function breaks(model) {
  /** @type {{ kind: "dropped" | "stopped" | "error" | "reattached", entry: EventEntry, text: string }[]} */
  const marks = [];
  for (const entry of model.events) {
    const { event } = entry;
    if (event.type === "ACTIVITY_SNAPSHOT" && event.activityType === PIPELINE_EVENT)
      marks.push({ kind: "reattached", entry, text: `re-attached at #${entry.index}: the kernel's stream had dropped` });
    if (event.type === "RUN_ERROR") marks.push({ kind: "error", entry, text: `RUN_ERROR at #${entry.index}: ${runErrorText(event)}` });
  }
  const last = model.events.at(-1);
  if (last && model.status === "cut")
    marks.push({ kind: "dropped", entry: last, text: `stream dropped after #${last.index}: ${model.detail}` });
  if (last && model.status === "stopped") marks.push({ kind: "stopped", entry: last, text: `stopped from the page after #${last.index}` });
  return marks;
}

const BREAK_NAMES = { dropped: "dropped", stopped: "stopped", error: "error", reattached: "re-attached" };

/** Tick spacing of 1, 2 or 5 times a power of ten, about `wanted` ticks over `duration`. @param {number} duration @param {number} wanted */
function tickStep(duration, wanted) {
  const rough = Math.max(duration / wanted, 1);
  const power = 10 ** Math.floor(Math.log10(rough));
  return [1, 2, 5, 10].map((m) => m * power).find((step) => step >= rough) ?? 10 * power;
}

/**
 * Draws the axis into `track`: labelled ticks, the notable gaps as hatched stretches, and where the stream broke; and
 * says under it what the hatching and the marks mean, when there are any.
 * @param {HTMLElement} track @param {HTMLElement} legend @param {RunModel} model
 */
export function drawAxis(track, legend, model) {
  const duration = durationOf(model);
  const span = Math.max(duration, 1);
  const x = (/** @type {number} */ ms) => `${((ms / span) * 100).toFixed(3)}%`;
  const step = tickStep(span, 6);
  /** @type {HTMLElement[]} */
  const marks = [];
  // Gaps first, so the ticks and their labels are drawn over them.
  const gaps = notableGaps(model);
  for (const gap of gaps) {
    const title = `${formatMs(gap.ms)} without an event, between #${gap.from.index} and #${gap.to.index}`;
    marks.push(
      h("span", {
        class: "axis-gap",
        title,
        "aria-label": title,
        style: { "--x": x(timeOf(model, gap.from)), "--w": x(gap.ms) },
      }),
    );
  }
  for (let ms = 0; ms <= span; ms += step) {
    marks.push(h("span", { class: "axis-tick", style: { "--x": x(ms) } }, h("span", { class: "axis-label" }, formatMs(ms))));
  }
  // Breaks last, over the ticks: they are what a person looks for.
  const broken = breaks(model);
  for (const mark of broken) {
    marks.push(
      h(
        "span",
        {
          class: `axis-break break-${mark.kind}`,
          title: mark.text,
          "aria-label": mark.text,
          style: { "--x": x(timeOf(model, mark.entry)) },
        },
        h("span", { class: "axis-break-label" }, BREAK_NAMES[mark.kind]),
      ),
    );
  }
  track.replaceChildren(...marks);
  legend.replaceChildren(
    ...(gaps.length
      ? [
          h(
            "span",
            { class: "legend-gap" },
            h("span", { class: "swatch gap-swatch", "aria-hidden": "true" }),
            `silence ≥ ${NOTABLE_TIMES_TYPICAL}× the stream's typical spacing (${formatMs(typicalGap(model))}) and ≥ ${NOTABLE_SHARE * 100}% of the run`,
          ),
        ]
      : []),
    ...broken.map((mark) =>
      h("span", { class: `legend-break break-${mark.kind}` }, h("span", { class: "swatch", "aria-hidden": "true" }), mark.text),
    ),
  );
  legend.hidden = gaps.length === 0 && broken.length === 0;
  track.setAttribute("aria-label", `time axis, ${formatMs(duration)} from the first event to the last`);
}
