/**
 * A run outside pipeline mode outlives a dropped stream too (contract §6
 * "A dropped stream"): when the kernel's stream ends, or its connection
 * breaks, before the task settled or asked for input, the task is followed
 * once with `GetTask` and `SubscribeToTask` (`tasks/get`, `tasks/resubscribe`
 * for an A2A 0.3 agent). Any agent has those two calls, so the pipeline
 * recovery route is not asked. Downstream ends the run (and leaves) on a
 * settled task or an interrupt, so an end that reaches this operator is a
 * drop. What the follow ends with is the run's end, read as any stream's:
 * the task cancelled and RUN_ERROR when it too ends without a boundary.
 *
 *   source: -t-a-#           follow: -(snapshot less text)-b-c|
 *   result: -t-a-(…)-b-c|
 */
import type { MonoTypeOperatorFunction } from "rxjs";
import { AguiError } from "../errors.js";
import { rpcErrorOf } from "../a2a/rpc-errors.js";
import type { KernelSignal } from "../model/kernel-signal.js";
import { operate, operatorOf } from "../rx/operate.js";
import type { RunA2A } from "../a2a/client.js";
import { followTask } from "./recovery.js";

/**
 * A connection that broke, as opposed to the kernel telling of a failure
 * (a JSON-RPC error, before or in the stream): only the first is a drop.
 */
export function isBrokenStream(error: unknown): boolean {
  return error instanceof AguiError && error.code === "A2A_UNAVAILABLE" && rpcErrorOf(error) === undefined;
}

/**
 * Follows the run's task once past a drop. `knownTaskId` is the id the
 * thread had before the stream started; the stream's own announcement is
 * taken as it passes, since writing it down may still be under way. A drop
 * before the task was named passes on as it came: there is nothing to
 * follow, and the run's end cancels the task by its context.
 */
export function followDropOnce(
  a2a: Pick<RunA2A, "getTask" | "subscribeToTask">,
  knownTaskId: () => string | null | undefined,
): MonoTypeOperatorFunction<KernelSignal> {
  return operatorOf<KernelSignal, KernelSignal>((destination) => {
    let announcedTaskId: string | undefined;
    const dropped = (end: () => void) => {
      const taskId = announcedTaskId ?? knownTaskId() ?? undefined;
      if (taskId === undefined) return end();
      followTask(a2a, taskId).subscribe(operate({ destination }));
    };
    return operate({
      destination,
      next: (signal) => {
        if (signal.kind === "task-bound") announcedTaskId ??= signal.taskId;
        destination.next(signal);
      },
      error: (error: unknown) => (isBrokenStream(error) ? dropped(() => destination.error(error)) : destination.error(error)),
      complete: () => dropped(() => destination.complete()),
    });
  });
}
