/**
 * Tasks no run follows any more. Two ways to be left with one:
 *
 * - A run that ends before it learned its task's id — the kernel's stream
 *   died with its first frames still unsent — cannot cancel that task by id.
 *   The thread's context is its own, and only one run holds the thread at a
 *   time, so any task of the context that is still submitted or working now
 *   is that run's (or an earlier crash's): `ListTasks` finds them, and each
 *   is cancelled. A kernel without `ListTasks` leaves the task to the kernel.
 * - A process that stopped mid-run without cleaning up (SIGKILL, a crash)
 *   leaves its thread's file as it was: an execution neither paused nor
 *   ended, whose task may still run. The next request on the thread finds
 *   it under the lease, cancels the task and ends the execution, before it
 *   starts anything new (`endOrphanedExecution`).
 */
import { AguiError } from "../errors.js";
import { errorFields, silentLogger, type Logger } from "../log.js";
import { rpcErrorOf } from "../a2a/rpc-errors.js";
import type { ThreadState } from "../state/thread-state.js";
import { normalizeTaskState } from "../../operators/to-kernel-signals.js";
import { isJsonObject } from "../model/json.js";
import { endExecution, hasPending } from "./thread-transitions.js";

const RUNNING = new Set(["submitted", "working"]);
/** The A2A error for a task that is already terminal: there is nothing left to cancel. */
const NOT_CANCELABLE = -32002;

/** What the orphan checks need of the A2A client. */
export interface OrphanA2A {
  cancelTask(taskId: string): Promise<unknown>;
  listTasks(contextId: string): Promise<Record<string, unknown>>;
}

export async function cancelRunningTasksOf(a2a: OrphanA2A, contextId: string, log: Logger): Promise<string[]> {
  let listed: Record<string, unknown>;
  try {
    listed = await a2a.listTasks(contextId);
  } catch (error) {
    log.warn({ ...errorFields(error), contextId }, "ListTasks failed; a task of the ended run may still run");
    return [];
  }
  const tasks = Array.isArray(listed.tasks) ? listed.tasks.filter(isJsonObject) : [];
  const running = tasks
    .filter(
      (task) => task.contextId === contextId && RUNNING.has(normalizeTaskState(isJsonObject(task.status) ? task.status.state : undefined)),
    )
    .flatMap((task) => (typeof task.id === "string" ? [task.id] : []));
  await Promise.all(running.map((id) => a2a.cancelTask(id).catch((error: unknown) => logCancelFailure(log, id, error))));
  return running;
}

/**
 * A CancelTask that failed, logged once. A task that had ended already (the
 * kernel settled it while the run ended, say because its client left) is
 * no failure: that is told at debug.
 */
export function logCancelFailure(log: Logger, taskId: string, error: unknown): void {
  if (error instanceof AguiError && rpcErrorOf(error)?.code === NOT_CANCELABLE)
    return log.debug({ taskId }, "CancelTask: the task had ended already");
  log.warn({ ...errorFields(error), taskId }, "CancelTask failed");
}

export interface OrphanDependencies {
  cancelTask: OrphanA2A["cancelTask"];
  /** Without it, a task whose id never reached the file is left to the kernel. */
  listTasks?: OrphanA2A["listTasks"];
  /** True for an execution kept open on purpose (a disconnect grace window, maybe another instance's): not an orphan. */
  isHeld?: (executionId: string) => boolean | Promise<boolean>;
  log?: Logger;
}

/**
 * `state` as a request finds it under the thread's lease. An execution that
 * is not over, not paused at interrupts and not held open has no run: a
 * process stopped in the middle of it. Its task is cancelled (by id, or by
 * the context when the id never reached the file), best effort, and the
 * execution ended; the caller persists the result.
 */
export async function endOrphanedExecution(state: ThreadState, deps: OrphanDependencies): Promise<ThreadState> {
  const { execution } = state;
  const over = state.terminalExecutionIds.includes(execution.executionId);
  if (over || hasPending(state) || (await deps.isHeld?.(execution.executionId))) return state;
  const log = deps.log ?? silentLogger;
  const { taskId } = execution;
  if (taskId) {
    await deps.cancelTask(taskId).catch((error: unknown) => {
      if (!(error instanceof AguiError && rpcErrorOf(error)?.code === NOT_CANCELABLE))
        log.warn({ ...errorFields(error), taskId }, "CancelTask of a task left running by a stopped run failed");
    });
  } else if (deps.listTasks) {
    await cancelRunningTasksOf({ cancelTask: deps.cancelTask, listTasks: deps.listTasks }, state.contextId, log);
  }
  return endExecution(state);
}
