// @ts-check
/**
 * What a pipeline step's node opens in the inspector: the step's facts as
 * the service's read-model keeps them (its times, its duration by the one
 * rule the events and `pipelineGraph` share, `finishedAt − startedAt` on the
 * kernel's clock, its attempt, how it ended, its error), and what the run
 * streamed inside it: its messages and its tool calls.
 */
import { formatMs } from "./time-axis.js";

/** @typedef {import("./model/pipeline-graph.js").StepNode} StepNode */
/** @typedef {import("./run-model.js").RunModel} RunModel */
/** @typedef {import("./run-model.js").Span} Span */

/** The AG-UI `stepName` of a step key (lib/model/pipeline-ids.ts): the bare id for a top-level step. @param {string} key */
const stepNameOf = (key) => (key.startsWith("step:") ? key.slice("step:".length) : key);

/** @param {string} text @param {number} max */
const clip = (text, max) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/**
 * The message, reasoning and tool spans the run streamed inside a step's
 * spans (each attempt, each reopening). A candidate's step holds only its
 * candidate's text, and the tool calls made from that text.
 * @param {RunModel} model @param {string} key @returns {Span[]}
 */
export function spansInStep(model, key) {
  const name = stepNameOf(key);
  const steps = model.spans.filter((span) => span.kind === "step" && span.label === name);
  /** @param {Span} span */
  const messageIdOf = (span) => String(model.events[span.start]?.event.messageId ?? "");
  return model.spans.filter((span) => {
    if (span.kind === "step") return false;
    return steps.some((step) => {
      const within = span.start > step.start && (step.end === undefined || span.start < step.end);
      if (!within || step.candidate === undefined) return within;
      if (span.kind !== "tool") return span.candidate === step.candidate;
      const parent = String(model.events[span.start]?.event.parentMessageId ?? "");
      return model.spans.some((other) => other.kind === "message" && other.candidate === step.candidate && messageIdOf(other) === parent);
    });
  });
}

/**
 * The facts of one step as lines of text for the inspector.
 * @param {StepNode} step @param {RunModel} model @param {{ waiting: boolean, candidate?: string }} context
 */
export function stepFactsText(step, model, { waiting, candidate }) {
  const status = waiting ? "running, waiting for an answer" : step.status;
  const lines = [
    `step: ${step.id}${step.title ? ` · ${step.title}` : ""}`,
    ...(step.type ? [`type: ${step.type}`] : []),
    ...(candidate ? [`candidate: ${candidate}`] : []),
    `status: ${status}`,
    `attempt: ${step.attempt ?? "—"}`,
    `started: ${step.startedAt ?? "—"}`,
    `finished: ${step.finishedAt ?? "—"}`,
    `duration: ${step.durationMs === null ? "— (not finished, or a time unknown)" : `${formatMs(step.durationMs)} (finishedAt − startedAt, the kernel's clock)`}`,
  ];
  if (step.status === "done" || step.status === "failed" || step.status === "skipped") lines.push(`outcome: ${step.status}`);
  if (step.error) lines.push(`error: ${[step.error.code, step.error.message].filter(Boolean).join(": ")}`);
  const inside = spansInStep(model, step.key);
  const messages = inside.filter((span) => span.kind === "message" || span.kind === "reasoning");
  const tools = inside.filter((span) => span.kind === "tool");
  lines.push("", `messages (${messages.length}):`);
  for (const span of messages)
    lines.push(`  ${span.kind === "reasoning" ? "reasoning" : span.label}: ${clip(span.text.replace(/\s+/g, " "), 160)}`);
  lines.push("", `tools (${tools.length}):`);
  for (const span of tools) {
    const outcome = span.result === undefined ? "no result yet" : span.failed ? "failed" : "ok";
    lines.push(`  ${span.label} · ${outcome}`, `    arguments: ${clip(span.text, 200)}`);
    if (span.result !== undefined) lines.push(`    result: ${clip(span.result, 200)}`);
  }
  return lines.join("\n");
}
