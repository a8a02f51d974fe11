/**
 * When a run cancels its A2A task (R-PER-5, R-PER-4): never while
 * interrupts still wait on it (they stay answerable), by id when the run
 * knows its task, else by looking the task up in the thread's context; and
 * for a client that left, after the run's pending writes, possibly after a
 * grace window in which the client may come back (R-SIB-7).
 */
import { errorFields, type Logger } from "../log.js";
import type { RunA2A } from "../a2a/client.js";
import type { DisconnectGrace } from "./disconnect-grace.js";
import { cancelRunningTasksOf, logCancelFailure } from "./orphans.js";
import type { ThreadRun } from "./thread-run.js";

export interface CancellationDependencies {
  a2a: Pick<RunA2A, "cancelTask" | "listTasks">;
  grace?: DisconnectGrace;
  /** Ends an execution the run left open (its grace window ran out). */
  endExecution?: (threadId: string, executionId: string) => Promise<void>;
  /** The run's logger. */
  log: Logger;
}

export interface RunCancellation {
  /** The run ended without the kernel settling its task. */
  cancelTask(): void;
  /** The client left before the run ended. */
  abandon(): void;
}

export function runCancellation(thread: ThreadRun, { a2a, grace, endExecution, log }: CancellationDependencies): RunCancellation {
  const { threadId, contextId } = thread.state;
  const cancel = (taskId: string | null) => {
    if (taskId) return void a2a.cancelTask(taskId).catch((error: unknown) => logCancelFailure(log, taskId, error));
    // The run never learned its task (the stream died before its first frame reached us): find it by context.
    void cancelRunningTasksOf(a2a, contextId, log);
  };
  const waiting = () => Object.keys(thread.state.execution.pending).length > 0;

  return {
    cancelTask: () => {
      if (!waiting()) cancel(thread.taskIdToCancel);
    },
    abandon: () =>
      thread.afterChanges((state, paused) => {
        if (paused || waiting()) return;
        const { taskId, executionId } = state.execution;
        if (!grace?.enabled || taskId === null) return cancel(taskId ?? thread.taskIdToCancel);
        thread.keepExecutionOpen();
        grace.hold({
          threadId,
          executionId,
          taskId,
          expire: () => {
            cancel(taskId);
            void endExecution?.(threadId, executionId).catch((error: unknown) =>
              log.warn({ ...errorFields(error), executionId }, "ending the execution after its grace window failed"),
            );
          },
        });
      }),
  };
}
