/**
 * How a thread's state changes over its life, as pure functions: a new
 * thread, a new execution for a new turn, the end of an execution. The
 * store persists the results; nothing here does I/O.
 */
import type { ThreadState } from "../state/thread-state.js";
import { THREAD_STATE_SCHEMA_VERSION } from "../state/thread-state.js";

export interface ThreadBindingInput {
  threadId: string;
  contextId: string;
  cwd: string;
  userId: string | null;
  rosInvocationId: string;
  executionId: string;
}

export function newThreadState(binding: ThreadBindingInput): ThreadState {
  return {
    schemaVersion: THREAD_STATE_SCHEMA_VERSION,
    threadId: binding.threadId,
    contextId: binding.contextId,
    cwd: binding.cwd,
    userId: binding.userId,
    iacCodeSessionId: null,
    execution: freshExecution(binding.executionId, binding.rosInvocationId, null),
    runDigests: {},
    appliedResumeDigests: [],
    terminalExecutionIds: [],
  };
}

function freshExecution(executionId: string, rosInvocationId: string, lastTaskId: string | null): ThreadState["execution"] {
  return {
    executionId,
    rosInvocationId,
    taskId: null,
    lastTaskId,
    pipelineSequence: 0,
    pipelineOpenSteps: [],
    textSnapshotDigests: [],
    pending: {},
  };
}

const withTerminal = (state: ThreadState, executionId: string) =>
  state.terminalExecutionIds.includes(executionId) ? state.terminalExecutionIds : [...state.terminalExecutionIds, executionId];

/**
 * A new non-resume turn is a new execution (contract §8): a new execution
 * id, no task yet, cursor, open steps and text digests cleared. The thread's
 * context and session stay.
 */
export function rotateExecution(state: ThreadState, executionId: string, rosInvocationId: string): ThreadState {
  const previous = state.execution;
  return {
    ...state,
    execution: freshExecution(executionId, rosInvocationId, previous.taskId ?? previous.lastTaskId),
    terminalExecutionIds: withTerminal(state, previous.executionId),
  };
}

/** The execution is over (finished, failed, cancelled, expired): nothing of it can be resumed or cancelled again. */
export function endExecution(state: ThreadState): ThreadState {
  // The graph kept for a view attaching at a pause goes with the pause: an ended execution has no run to show.
  const { pipelineGraph: _pausedGraph, ...execution } = state.execution;
  return {
    ...state,
    execution: { ...execution, taskId: null, lastTaskId: execution.taskId ?? execution.lastTaskId, pending: {} },
    terminalExecutionIds: withTerminal(state, execution.executionId),
  };
}

export const hasPending = (state: ThreadState) => Object.keys(state.execution.pending).length > 0;

/** The earliest expiry among the pending interrupts, if any has one. */
export function pendingExpiry(state: ThreadState): number | undefined {
  const times = Object.values(state.execution.pending)
    .map((pending) => (pending.expiresAt ? Date.parse(pending.expiresAt) : Number.NaN))
    .filter((time) => Number.isFinite(time));
  return times.length > 0 ? Math.min(...times) : undefined;
}

export const pendingExpired = (state: ThreadState, now: number) => {
  const expiry = pendingExpiry(state);
  return expiry !== undefined && expiry <= now;
};
