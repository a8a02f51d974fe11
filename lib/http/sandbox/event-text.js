// @ts-check
/** One line per event for the timeline; the full JSON is one click away, so this only has to tell events apart. */

import { runErrorText } from "./labels.js";
import { PIPELINE_EVENT } from "./run-model.js";

const MAX = 160;

/** @param {unknown} value */
function short(value) {
  const text = typeof value === "string" ? value : (JSON.stringify(value) ?? "");
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > MAX ? `${line.slice(0, MAX - 1)}…` : line;
}

/** @param {unknown} text */
const quoted = (text) => `“${short(text)}”`;

/** @param {Record<string, any>[] | undefined} usage */
function tokens(usage) {
  if (!Array.isArray(usage) || usage.length === 0) return "";
  const total = usage.reduce((sum, entry) => sum + (Number(entry.totalTokens) || 0), 0);
  return ` · ${total.toLocaleString("en")} tokens`;
}

/**
 * What a pipeline event is about, from the envelope fields it has
 * (docs/a2a-contract.md §3): its step, candidate, stack and status.
 * @param {Record<string, any>} value
 */
function pipelineSubject(value) {
  const data = value.data ?? {};
  const parts = [
    value.step?.id && `step ${value.step.id}`,
    value.candidate?.name ?? value.candidate?.id,
    data.pipelineName,
    data.stackName,
    data.status,
  ];
  return parts
    .filter((part) => typeof part === "string" && part !== "")
    .map(short)
    .join(" · ");
}

/**
 * A recovery snapshot, said as what it is: the service re-attached to the
 * kernel's task (its stream had dropped, or an observer joined late) and
 * got the pipeline's state from the kernel before the events it missed.
 * @param {Record<string, any>} snapshot
 */
function recovered(snapshot) {
  const steps = Array.isArray(snapshot.steps) ? snapshot.steps : [];
  const where = steps
    .filter((/** @type {any} */ step) => typeof step?.id === "string")
    .map((/** @type {any} */ step) => `${step.id} ${step.status ?? "?"}`)
    .join(", ");
  const known = typeof snapshot.lastSequence === "number" ? ` · pipeline events to #${snapshot.lastSequence} already in` : "";
  return `re-attached: the pipeline as the kernel recovered it${where ? ` (${short(where)})` : ""}${known}; the missed events follow`;
}

/** @param {Record<string, any>} event @returns {string} */
export function summarize(event) {
  switch (event.type) {
    case "RUN_STARTED":
      return `run ${event.runId}${event.parentRunId ? ` (after ${event.parentRunId})` : ""}`;
    case "RUN_FINISHED": {
      const outcome = event.outcome?.type ?? "success";
      const count = event.outcome?.interrupts?.length;
      return `${outcome}${count ? ` · ${count} interrupt${count > 1 ? "s" : ""}` : ""}${tokens(event.usage)}`;
    }
    case "RUN_ERROR":
      return short(runErrorText(event));
    case "STEP_STARTED":
    case "STEP_FINISHED":
      return String(event.stepName);
    case "TEXT_MESSAGE_START":
    case "REASONING_MESSAGE_START":
      return String(event.role ?? "");
    case "TEXT_MESSAGE_CONTENT":
    case "REASONING_MESSAGE_CONTENT":
    case "TOOL_CALL_ARGS":
      return quoted(event.delta);
    case "TOOL_CALL_START":
      return String(event.toolCallName);
    case "TOOL_CALL_RESULT": {
      const failed = event.metadata?.["iac-code"]?.status === "failed";
      return `${failed ? "failed: " : ""}${short(event.content)}`;
    }
    case "ACTIVITY_SNAPSHOT":
      return event.activityType === PIPELINE_EVENT ? recovered(event.content?.snapshot ?? {}) : short(event.activityType ?? "");
    case "CUSTOM":
      if (event.name === PIPELINE_EVENT) return pipelineSubject(event.value ?? {});
      if (event.name === "iac-code.tool-progress.v1") return short(event.value?.mcp?.message ?? event.value?.status ?? "");
      if (event.name === "iac-code.artifact.v1") return short(event.value?.name ?? "");
      return short(event.value);
    default:
      return "";
  }
}

/** The CUSTOM event's name, or the pipeline event's own type, shown next to the AG-UI type. @param {Record<string, any>} event */
export function subtype(event) {
  if (event.type !== "CUSTOM") return undefined;
  return event.name === PIPELINE_EVENT ? String(event.value?.eventType ?? "?") : String(event.name);
}
