/**
 * The facts a STEP_STARTED / STEP_FINISHED carries about its pipeline step
 * (docs/pipeline-feed.md), read off the kernel's step envelope (contract
 * §3): which step and attempt it is, where it sits in the pipeline, its
 * candidate, its times and, on the finish, how it ended.
 *
 * They travel in the event's `metadata`, under `"iac-code"` as `step`: the
 * AG-UI client (`@ag-ui/client` 1.0 `enforceEvents`) strips any top-level
 * property its schema does not name, and keeps `metadata` whole, so a
 * subscriber's `onStepStartedEvent` sees them. `rawEvent` would pass too,
 * but it means "the source's own event", not a documented shape.
 */
import type { PipelineEnvelope } from "./kernel-signal.js";
import { isJsonObject, nonEmptyString, type JsonObject } from "./json.js";

/** How a step ended: what the kernel said, or `run-ended` when the run closed the span with the step still open. */
export type StepOutcome = "completed" | "failed" | "skipped" | "run-ended";

/** The candidate a candidate step runs in, and the step that runs the candidates. */
export interface StepParent {
  /** Absent only on a reopened span, which knows the step by its key alone. */
  stepId?: string;
  stepRunId?: string;
  candidateId: string;
  candidateRunId?: string;
  candidateIndex?: number;
  candidateName?: string;
}

export interface StepFacts {
  schemaVersion: 1;
  /** The durable key (`step:<id>` or `candidate:<candidate>:<id>`), the same across attempts and runs. */
  key: string;
  stepId: string;
  /** This attempt's run id (`step-<id>-<attempt>`): a retry has a new one. */
  stepRunId?: string;
  pipelineRunId?: string;
  type?: string;
  /** The kernel's `data.title` of the step's start. */
  title?: string;
  index?: number;
  total?: number;
  attempt?: number;
  parent?: StepParent;
  /** The kernel envelope's `sequence`: a re-attach's `afterSequence` can go on from it. */
  sequence?: number;
  /** The step's start (the kernel's `createdAt` of its start), when known. */
  startedAt?: string;
  /** STEP_FINISHED only. */
  finishedAt?: string;
  /** `finishedAt − startedAt` (`stepDuration`), when the finish knows both. */
  durationMs?: number;
  outcome?: StepOutcome;
  error?: { code?: string; message?: string };
  /**
   * True on a STEP_STARTED that does not mark the step's start: a span
   * reopened for a step that started in an earlier run (before an
   * interrupt), or opened just to be finished (an observer that attached
   * after the start).
   */
  reopened?: true;
}

/** The metadata key, shared with the tool events' `metadata["iac-code"]`. */
export const IAC_CODE_METADATA = "iac-code";

const num = (value: unknown): number | undefined => (typeof value === "number" && Number.isFinite(value) ? value : undefined);

function parentOf(envelope: PipelineEnvelope, step: JsonObject | undefined): StepParent | undefined {
  const candidate = isJsonObject(envelope.candidate) ? envelope.candidate : undefined;
  const stepId = nonEmptyString(step?.id);
  const candidateId = candidate ? (nonEmptyString(candidate.id) ?? nonEmptyString(candidate.runId)) : undefined;
  if (candidate === undefined || stepId === undefined || candidateId === undefined) return undefined;
  return {
    stepId,
    stepRunId: nonEmptyString(step?.runId),
    candidateId,
    candidateRunId: nonEmptyString(candidate.runId),
    candidateIndex: num(candidate.index),
    candidateName: nonEmptyString(candidate.name),
  };
}

function outcomeOf(envelope: PipelineEnvelope, data: JsonObject): StepOutcome {
  if (envelope.eventType === "step_failed" || envelope.eventType === "candidate_step_failed") return "failed";
  // The kernel completes a step it did not run (a denied deployment) with `outcome: "skipped"`.
  return data.outcome === "skipped" ? "skipped" : "completed";
}

function errorOf(data: JsonObject): StepFacts["error"] {
  const error = data.error;
  if (typeof error === "string") return { message: error };
  if (!isJsonObject(error)) return undefined;
  const code = nonEmptyString(error.code);
  const message = nonEmptyString(error.message);
  return code === undefined && message === undefined ? undefined : { code, message };
}

/**
 * The facts of the step `envelope` opens or closes, under its durable
 * `key`. A candidate step's own coordinates are `candidateStep`'s, its
 * parent the candidate and the step that runs it.
 */
export function stepFactsOf(envelope: PipelineEnvelope, key: string, phase: "started" | "finished"): StepFacts {
  const outer = isJsonObject(envelope.step) ? envelope.step : undefined;
  const inner = isJsonObject(envelope.candidateStep) ? envelope.candidateStep : outer;
  const data = isJsonObject(envelope.data) ? envelope.data : {};
  const at = nonEmptyString(envelope.createdAt);
  const parent = inner !== outer ? parentOf(envelope, outer) : undefined;
  const resumes = envelope.eventType === "input_received";
  // Every field written, undefined or not: all facts then share one shape, which every later stage reads
  // faster (the chain bench lost a fifth to objects of many shapes), and JSON leaves undefined out anyway.
  return {
    schemaVersion: 1,
    key,
    stepId: nonEmptyString(inner?.id) ?? key,
    stepRunId: nonEmptyString(inner?.runId),
    pipelineRunId: nonEmptyString(envelope.pipelineRunId),
    type: nonEmptyString(inner?.type),
    title: phase === "started" ? nonEmptyString(data.title) : undefined,
    index: num(inner?.index),
    total: num(inner?.total),
    attempt: num(inner?.attempt),
    parent,
    sequence: num(envelope.sequence),
    // An answered input resumes a step that started before it: the span opens again, the step does not start.
    startedAt: phase === "started" && !resumes ? at : undefined,
    finishedAt: phase === "finished" ? at : undefined,
    // The kernel's own `data.durationMs` is not passed on: a step's duration is one rule (`stepDuration`), set with its start.
    durationMs: undefined,
    outcome: phase === "finished" ? outcomeOf(envelope, data) : undefined,
    error: phase === "finished" ? errorOf(data) : undefined,
    reopened: resumes ? true : undefined,
  };
}

/** What a span knows of a step from its key alone (a step reopened from the thread's durable set). */
export function keyOnlyFacts(key: string): StepFacts {
  if (key.startsWith("candidate:")) {
    // `candidate:<candidate>:<stepId>`: a candidate id may hold colons, a step id does not.
    const rest = key.slice("candidate:".length);
    const cut = rest.lastIndexOf(":");
    return { schemaVersion: 1, key, stepId: rest.slice(cut + 1), parent: { candidateId: rest.slice(0, cut) } };
  }
  return { schemaVersion: 1, key, stepId: key.startsWith("step:") ? key.slice("step:".length) : key };
}

/**
 * How long a step took, the one rule the events, the read-model and the
 * docs keep (docs/pipeline-feed.md): its end minus its start, both as the
 * kernel stamped its step envelopes. Unknown unless both are known.
 */
export function stepDuration(startedAt: string | null | undefined, finishedAt: string | null | undefined): number | undefined {
  if (!startedAt || !finishedAt) return undefined;
  const ms = Date.parse(finishedAt) - Date.parse(startedAt);
  return Number.isFinite(ms) ? Math.max(0, ms) : undefined;
}

/** A finish's facts with the step's start, and so its duration. */
export function withStart(finish: StepFacts, startedAt: string): StepFacts {
  return { ...finish, startedAt, durationMs: stepDuration(startedAt, finish.finishedAt) };
}

/** The STEP_STARTED of a span opened only to be finished: the finish's facts, less what only a finish knows. */
export function reopenedFrom(finish: StepFacts): StepFacts {
  const { finishedAt: _finishedAt, durationMs: _durationMs, outcome: _outcome, error: _error, ...start } = finish;
  return { ...start, reopened: true };
}

/** The `metadata` of a step event carrying `facts`. */
export const stepMetadata = (facts: StepFacts) => ({ "iac-code": { step: facts } }) satisfies Record<typeof IAC_CODE_METADATA, unknown>;

/** The facts a step event carries, if any (a client's, or a reducer's, read of `metadata["iac-code"].step`). */
export function stepFactsFrom(event: { metadata?: unknown }): StepFacts | undefined {
  const metadata = event.metadata;
  if (!isJsonObject(metadata)) return undefined;
  const ours = metadata[IAC_CODE_METADATA];
  if (!isJsonObject(ours) || !isJsonObject(ours.step)) return undefined;
  const step = ours.step;
  return typeof step.key === "string" && typeof step.stepId === "string" ? (step as unknown as StepFacts) : undefined;
}
