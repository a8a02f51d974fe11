/**
 * The ids a pipeline envelope is known by on the AG-UI side (contract §6,
 * R-MAP-3): an envelope in, the kernel message it belongs to, a step key
 * and a step name out. Parallel candidates run the same steps
 * under the same step ids, so every id here carries the candidate's identity
 * first: two candidates never share a message or a step name.
 */
import type { PipelineEnvelope } from "./kernel-signal.js";
import { isJsonObject, nonEmptyString } from "./json.js";

/** Until a recovery snapshot names the pipeline run, the thread stands for it. */
export const defaultPipelineRunId = (threadId: string) => `pipeline-${threadId}`;

/** The ACTIVITY_SNAPSHOT message that carries a pipeline run's recovery snapshot. */
export const pipelineActivityId = (pipelineRunId: string) => `pipeline:${pipelineRunId}`;

/** A coordinate of a message: the part's `runId`, else its `id`. */
const coordinateOf = (part: unknown): string | undefined =>
  isJsonObject(part) ? (nonEmptyString(part.runId) ?? nonEmptyString(part.id)) : undefined;

/**
 * The kernel message an envelope's text, thinking and tool calls belong to:
 * `pipeline-message:<scope>[:<c1>:<c2>…]`, the coordinates being the `runId`
 * (else `id`) of `candidate`, `candidateStep` and `step`, in that order. A
 * run id changes with each attempt, so a retried step writes a new message
 * rather than appending to the failed one. The pipeline run id is left out:
 * a run follows one pipeline, and the id a recovery snapshot names must not
 * split a message in two; `projectText` scopes the key to the AG-UI run.
 */
export function pipelineMessageId(envelope: PipelineEnvelope): string {
  // Three reads and a string, no arrays: every pipeline text, thinking and tool envelope asks.
  const candidate = coordinateOf(envelope.candidate);
  let candidateStep = coordinateOf(envelope.candidateStep);
  let step = coordinateOf(envelope.step);
  if (candidateStep === candidate) candidateStep = undefined;
  if (step === candidate || step === candidateStep) step = undefined;
  let id = `pipeline-message:${nonEmptyString(envelope.scope) ?? "pipeline"}`;
  if (candidate !== undefined) id += `:${candidate}`;
  if (candidateStep !== undefined) id += `:${candidateStep}`;
  if (step !== undefined) id += `:${step}`;
  return id;
}

/**
 * The durable key of the step an envelope belongs to, or undefined when it
 * names none: `candidate:<candidate>:<stepId>` inside a candidate, else
 * `step:<stepId>`, where `stepId` is `(candidateStep || step).id`. The
 * candidate is named by `id` (its sub-pipeline id), else a `subPipelineId`
 * (the candidate's own, then the envelope's), else its `runId`.
 */
export function pipelineStepKey(envelope: PipelineEnvelope): string | undefined {
  const step = isJsonObject(envelope.candidateStep) ? envelope.candidateStep : envelope.step;
  const stepId = isJsonObject(step) ? nonEmptyString(step.id) : undefined;
  if (stepId === undefined) return undefined;
  const candidate = isJsonObject(envelope.candidate) ? envelope.candidate : undefined;
  const candidateId = candidate
    ? (nonEmptyString(candidate.id) ??
      nonEmptyString(candidate.subPipelineId) ??
      nonEmptyString(envelope.subPipelineId) ??
      nonEmptyString(candidate.runId))
    : undefined;
  return candidateId === undefined ? `step:${stepId}` : `candidate:${candidateId}:${stepId}`;
}

/**
 * The AG-UI `stepName` of a step key: the bare step id for a top-level step,
 * the whole key for a candidate's, so that the same step running in two
 * candidates side by side is two legal spans.
 */
export const stepNameOf = (key: string): string => (key.startsWith("step:") ? key.slice("step:".length) : key);
