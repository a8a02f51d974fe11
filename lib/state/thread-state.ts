/**
 * What the service remembers about one AG-UI thread, between runs and
 * across restarts (R-PER-1, wire contract §8). It is deliberately small and
 * holds no conversation text and no credentials (R-PER-3): ids, digests, the
 * pipeline cursor, and the public projection of pending interrupts.
 */

import type { PipelineGraph } from "../model/pipeline-graph.js";

export const THREAD_STATE_SCHEMA_VERSION = 1;

/**
 * The only fields of a kernel input projection (`metadata.iac_code.input`,
 * `pendingPermissions[]`) that are kept, persisted and shown (contract §5).
 * Everything else a kernel sends in a projection is dropped on arrival.
 */
export const KEPT_INPUT_FIELDS = [
  "schemaVersion",
  "kind",
  "requestTaskId",
  "contextId",
  "inputId",
  "toolUseId",
  "toolName",
  "title",
  "purpose",
  "effect",
  "target",
  "isReadOnly",
  "prompt",
  "safeSummary",
  "options",
  "language",
  "deploymentSummary",
  "scope",
  "subPipelineId",
  "operation",
  "displayParameters",
  "allowFreeText",
  "freeTextPrompt",
  "required",
  "selector",
] as const;

export type InputProjection = { inputId: string; kind?: string } & Partial<Record<(typeof KEPT_INPUT_FIELDS)[number], unknown>>;

export interface PendingInput {
  /** The kept projection fields; `inputId` is always set (generated when the kernel sent none). */
  value: InputProjection;
  /** Sub-pipeline waits are answered out of band (contract §5). */
  sideband: boolean;
  /** ISO 8601 with `Z`; absent when expiry is disabled (TTL 0). */
  expiresAt?: string;
}

export interface ExecutionState {
  executionId: string;
  rosInvocationId: string;
  taskId: string | null;
  /** The task of the previous execution, kept so a late cancel can still find it. */
  lastTaskId: string | null;
  pipelineSequence: number;
  pipelineOpenSteps: string[];
  /**
   * The full text of each message sent in this execution, as `<SHA-256 hex>:<UTF-16 length>`
   * (`lib/model/text-digest.ts`, contract §6); older documents hold the bare SHA-256.
   */
  textSnapshotDigests: string[];
  pending: Record<string, PendingInput>;
  /** The run that holds this execution, or held it last (absent in files written before it was kept). */
  runId?: string;
  /**
   * The run whose pause raised the pending interrupts, until a resume under
   * its id is admitted: CopilotKit resumes with the interrupted run's id
   * (see `threads/admission.ts`).
   */
  interruptedRunId?: string;
  /**
   * The pipeline graph as the run that paused left it (`stored-pipeline-graph.ts`, bounded), so a
   * view attaching at the interrupt draws it whole; absent while no run has paused this execution.
   */
  pipelineGraph?: PipelineGraph;
}

/**
 * The execution fence a thread's last run ran under (`forwardedProps.iacCode.executionFence`):
 * who owned the session's writes. Compared canonically (see `threads/fence.ts`).
 */
export interface ExecutionFence {
  version: string | null;
  /** Any JSON the client named the owner with (a handoff's target); null when it named none. */
  owner: unknown;
}

export interface AppliedResume {
  executionId: string;
  interruptId: string;
  digest: string;
}

/** A run and the kernel message ids that open it in a task's history (`threads/message-runs.ts`). */
export interface MessageRun {
  /** The run its messages are named under (`model/message-ids.ts`). */
  messageRunId: string;
  opensWith: string[];
  /** Tool calls its answers showed the answer's text as the result of, at once (absent: none). */
  answeredCalls?: string[];
}

export interface ThreadState {
  schemaVersion: typeof THREAD_STATE_SCHEMA_VERSION;
  threadId: string;
  contextId: string;
  cwd: string;
  userId: string | null;
  iacCodeSessionId: string | null;
  execution: ExecutionState;
  /** runId → canonical digest of the request (credentials removed). */
  runDigests: Record<string, string>;
  /** Digests of the resumes admitted under the id of the run they resumed: a replay of one is DUPLICATE_RUN_ID too. */
  reusedRunDigests?: string[];
  appliedResumeDigests: AppliedResume[];
  terminalExecutionIds: string[];
  /** The newest runs and what opens each in the kernel's history; absent in files written before it was kept. */
  messageRuns?: MessageRun[];
  /** Absent until a request carries a fence (and in files written before it was kept). */
  executionFence?: ExecutionFence;
}
