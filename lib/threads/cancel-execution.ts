/**
 * `POST /extensions/iac-code/v1/executions/{executionId}/cancel` (R-HTTP-3):
 * cancels the execution's A2A task and ends the execution, which clears its
 * pending interrupts. An execution that already ended says so; one this
 * thread never had, or asked for with another invocation id, is not found.
 */
import { AguiError } from "../errors.js";
import type { ThreadState } from "../state/thread-state.js";
import { rpcErrorOf } from "../a2a/client.js";

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
