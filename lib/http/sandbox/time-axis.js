// @ts-check
/**
 * A run's time, read from the events' own `timestamp` (the service stamps
 * every event with its clock, in milliseconds) rather than their numbers:
 * a tool that thinks for ten seconds then takes ten seconds of the chart,
 * not one row. A stream without timestamps falls back to arrival times.
 */
import { h } from "./dom.js";

/** @typedef {import("./run-model.js").RunModel} RunModel */
/** @typedef {import("./run-model.js").EventEntry} EventEntry */
/** @typedef {import("./run-model.js").Span} Span */

/** Gaps shorter than this share of the run are not worth marking on the axis. */
const NOTABLE_GAP = 0.08;
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

/** Tick spacing of 1, 2 or 5 times a power of ten, about `wanted` ticks over `duration`. @param {number} duration @param {number} wanted */
function tickStep(duration, wanted) {
  const rough = Math.max(duration / wanted, 1);
  const power = 10 ** Math.floor(Math.log10(rough));
  return [1, 2, 5, 10].map((m) => m * power).find((step) => step >= rough) ?? 10 * power;
}

/**
 * Draws the axis into `track`: labelled ticks, and the notable gaps as hatched stretches.
 * @param {HTMLElement} track @param {RunModel} model
 */
export function drawAxis(track, model) {
  const duration = durationOf(model);
  const span = Math.max(duration, 1);
  const x = (/** @type {number} */ ms) => `${((ms / span) * 100).toFixed(3)}%`;
  const step = tickStep(span, 6);
  /** @type {HTMLElement[]} */
  const marks = [];
  // Gaps first, so the ticks and their labels are drawn over them.
  for (const gap of longestGaps(model, MARKED_GAPS)) {
    if (gap.ms < span * NOTABLE_GAP) continue;
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
  track.replaceChildren(...marks);
  track.setAttribute("aria-label", `time axis, ${formatMs(duration)} from the first event to the last`);
}
