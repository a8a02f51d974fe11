/**
 * The on-disk form of a ThreadState: an explicit projection onto the known
 * fields (the allowlist of R-PER-3) and the schema check of
 * `schemas/thread-state.schema.json`. Both directions go through here, so a
 * caller's extra properties never reach the disk and a file's extra
 * properties never reach a caller.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import { SCHEMAS_DIR } from "../paths.js";
import { projectPipelineGraph } from "./stored-pipeline-graph.js";
import {
  KEPT_INPUT_FIELDS,
  type AppliedResume,
  type ExecutionFence,
  type ExecutionState,
  type InputProjection,
  type MessageRun,
  type PendingInput,
  type ThreadState,
} from "./thread-state.js";

export const THREAD_STATE_SCHEMA_FILE = path.join(SCHEMAS_DIR, "thread-state.schema.json");

let validateDocument: ValidateFunction | undefined;

function documentValidator(): ValidateFunction {
  validateDocument ??= new Ajv2020({ strict: true, allowUnionTypes: true }).compile(
    JSON.parse(readFileSync(THREAD_STATE_SCHEMA_FILE, "utf8")) as object,
  );
  return validateDocument;
}

/** The schema's own words (path and message), never an instance path: record keys are client ids. */
function describe(error: ErrorObject): string {
  return `${error.schemaPath}: ${error.message ?? "is invalid"}`;
}

/** Undefined when `document` is a valid version-1 thread state, else what is wrong with it. */
export function schemaProblem(document: unknown): string | undefined {
  const validate = documentValidator();
  if (validate(document)) return undefined;
  const first = validate.errors?.[0];
  return first ? describe(first) : "does not match the thread-state schema";
}

type Json = Record<string, unknown>;

/** `Object.fromEntries` defines own properties, so a key such as `__proto__` stays data. */
function mapRecord<T>(record: unknown, project: (value: unknown) => T): Record<string, T> {
  if (record === null || typeof record !== "object") return record as Record<string, T>;
  return Object.fromEntries(Object.entries(record).map(([key, value]) => [key, project(value)]));
}

function projectInput(value: unknown): InputProjection {
  if (value === null || typeof value !== "object") return value as InputProjection;
  const source = value as Json;
  return Object.fromEntries(
    KEPT_INPUT_FIELDS.filter((field) => Object.hasOwn(source, field) && source[field] !== undefined).map((field) => [field, source[field]]),
  ) as InputProjection;
}

function projectPending(value: unknown): PendingInput {
  if (value === null || typeof value !== "object") return value as PendingInput;
  const pending = value as PendingInput;
  const projected: PendingInput = { value: projectInput(pending.value), sideband: pending.sideband };
  if (pending.expiresAt !== undefined) projected.expiresAt = pending.expiresAt;
  return projected;
}

function projectExecution(execution: ExecutionState): ExecutionState {
  if (execution === null || typeof execution !== "object") return execution;
  return {
    executionId: execution.executionId,
    rosInvocationId: execution.rosInvocationId,
    taskId: execution.taskId,
    // Older version-1 documents have no lastTaskId (contract §8).
    lastTaskId: execution.lastTaskId ?? null,
    pipelineSequence: execution.pipelineSequence,
    pipelineOpenSteps: execution.pipelineOpenSteps,
    textSnapshotDigests: execution.textSnapshotDigests,
    pending: mapRecord(execution.pending, projectPending),
    ...(execution.runId !== undefined ? { runId: execution.runId } : {}),
    ...(execution.interruptedRunId !== undefined ? { interruptedRunId: execution.interruptedRunId } : {}),
    ...(execution.pipelineGraph !== undefined ? { pipelineGraph: projectPipelineGraph(execution.pipelineGraph) } : {}),
  };
}

function projectApplied(applied: AppliedResume): AppliedResume {
  if (applied === null || typeof applied !== "object") return applied;
  return { executionId: applied.executionId, interruptId: applied.interruptId, digest: applied.digest };
}

function projectFence(fence: ExecutionFence): ExecutionFence {
  if (fence === null || typeof fence !== "object") return fence;
  return { version: fence.version, owner: fence.owner };
}

function projectMessageRun(run: MessageRun): MessageRun {
  if (run === null || typeof run !== "object") return run;
  return {
    messageRunId: run.messageRunId,
    opensWith: run.opensWith,
    ...(run.answeredCalls !== undefined ? { answeredCalls: run.answeredCalls } : {}),
  };
}

/**
 * Exactly the fields of ThreadState, picked one by one (never a spread), and
 * for pending inputs only KEPT_INPUT_FIELDS. Values of the wrong type are
 * passed through unchanged for the schema to reject.
 */
export function projectThreadState(state: ThreadState): ThreadState {
  return {
    schemaVersion: state.schemaVersion,
    threadId: state.threadId,
    contextId: state.contextId,
    cwd: state.cwd,
    userId: state.userId,
    iacCodeSessionId: state.iacCodeSessionId,
    execution: projectExecution(state.execution),
    runDigests: mapRecord(state.runDigests, (digest) => digest as string),
    ...(state.reusedRunDigests !== undefined ? { reusedRunDigests: state.reusedRunDigests } : {}),
    appliedResumeDigests: Array.isArray(state.appliedResumeDigests)
      ? state.appliedResumeDigests.map(projectApplied)
      : state.appliedResumeDigests,
    terminalExecutionIds: state.terminalExecutionIds,
    ...(state.executionFence !== undefined ? { executionFence: projectFence(state.executionFence) } : {}),
    ...(state.messageRuns !== undefined
      ? { messageRuns: Array.isArray(state.messageRuns) ? state.messageRuns.map(projectMessageRun) : state.messageRuns }
      : {}),
  };
}
