/**
 * The cancel of an execution (`POST /extensions/iac-code/v1/executions/{executionId}/cancel`, R-HTTP-3):
 * cancels the execution's A2A task and ends the execution, which clears its
 * pending interrupts. An execution that already ended says so; one this
 * thread never had, or asked for with another invocation id, is not found.
 */
import { AguiError, THREAD_BUSY_RETRY_AFTER_S } from "../errors.js";
import type { ThreadState } from "../state/thread-state.js";
import type { ThreadStore } from "../state/thread-store.js";
import { rpcErrorOf } from "../a2a/client.js";
import { acquireThread, loadThread } from "./load-thread.js";
import { endExecution } from "./thread-transitions.js";

export type CancelOutcome = "cancelled" | "already_terminal";

/** The thread as the cancel sees it: through the active run when there is one, so changes stay in order. */
export interface CancellableThread {
  readonly state: ThreadState;
  end(): Promise<void>;
}

/** The A2A error for a task that is already terminal (not cancelable). */
const NOT_CANCELABLE = -32002;

export async function cancelExecution(
  executionId: string,
  request: { threadId: string; rosInvocationId: string },
  thread: CancellableThread | undefined,
  cancelTask: (taskId: string) => Promise<unknown>,
): Promise<CancelOutcome> {
  const state = thread?.state;
  if (!thread || !state || state.threadId !== request.threadId) throw new AguiError("EXECUTION_NOT_FOUND");
  const { execution } = state;
  const current = execution.executionId === executionId && !state.terminalExecutionIds.includes(executionId);
  if (!current) {
    if (state.terminalExecutionIds.includes(executionId)) return "already_terminal";
    throw new AguiError("EXECUTION_NOT_FOUND");
  }
  if (execution.rosInvocationId !== request.rosInvocationId) throw new AguiError("EXECUTION_NOT_FOUND");
  if (execution.taskId) {
    try {
      await cancelTask(execution.taskId);
    } catch (error) {
      // A task that finished meanwhile needs no cancel; anything else leaves the execution as it was.
      if (!(error instanceof AguiError && rpcErrorOf(error)?.code === NOT_CANCELABLE)) throw error;
    }
  }
  await thread.end();
  return "cancelled";
}

/**
 * `work` on the thread as the store has it, when no run of this process
 * holds it: under its lease, with `end()` saving the ended execution; or,
 * when another instance's run holds the thread (a shared store), read
 * without the lease, which that run keeps.
 */
export async function cancelStoredExecution<T>(
  store: ThreadStore,
  threadId: string,
  work: (thread: CancellableThread | undefined) => Promise<T>,
): Promise<T> {
  const lease = await acquireThread(store, threadId);
  if (!lease) return work(store.shared ? await heldElsewhere(store, threadId) : busy());
  try {
    let state = await loadThread(store, threadId);
    if (!state) return await work(undefined);
    const thread: CancellableThread = {
      get state() {
        return state!;
      },
      async end() {
        state = endExecution(state!);
        await store.save(state, lease);
      },
    };
    return await work(thread);
  } finally {
    await lease.release();
  }
}

const busy = (): never => {
  throw new AguiError("THREAD_BUSY", {}, { retryAfterS: THREAD_BUSY_RETRY_AFTER_S });
};

/**
 * The thread as another instance's run holds it. Only its task can be
 * cancelled from here, and that run ends the execution itself, so an
 * execution whose task is not known yet is still THREAD_BUSY.
 */
async function heldElsewhere(store: ThreadStore, threadId: string): Promise<CancellableThread | undefined> {
  const state = await loadThread(store, threadId);
  if (!state) return undefined;
  if (state.execution.taskId === null && !state.terminalExecutionIds.includes(state.execution.executionId)) busy();
  return { state, end: async () => {} };
}
