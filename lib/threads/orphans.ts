/**
 * A run that ends before it learned its task's id — the kernel's stream
 * died with its first frames still unsent — cannot cancel that task by id.
 * The thread's context is its own, and only one run holds the thread at a
 * time, so any task of the context that is still submitted or working now is
 * that run's (or an earlier crash's): `ListTasks` finds them, and each is
 * cancelled. A kernel without `ListTasks` leaves the task to the kernel.
 */
import type { RunA2A } from "../run.js";
import { normalizeTaskState } from "../../operators/to-kernel-signals.js";
import { isObject } from "../../operators/unwrap-stream-response.js";

const RUNNING = new Set(["submitted", "working"]);

export async function cancelRunningTasksOf(
  a2a: Pick<RunA2A, "listTasks" | "cancelTask">,
  contextId: string,
  log: (message: string, error?: unknown) => void,
): Promise<string[]> {
  let listed: Record<string, unknown>;
  try {
    listed = await a2a.listTasks(contextId);
  } catch (error) {
    log(`ListTasks for ${contextId} failed; a task of the ended run may still run`, error);
    return [];
  }
  const tasks = Array.isArray(listed.tasks) ? listed.tasks.filter(isObject) : [];
  const running = tasks
    .filter(
      (task) => task.contextId === contextId && RUNNING.has(normalizeTaskState(isObject(task.status) ? task.status.state : undefined)),
    )
    .flatMap((task) => (typeof task.id === "string" ? [task.id] : []));
  await Promise.all(running.map((id) => a2a.cancelTask(id).catch((error: unknown) => log(`CancelTask ${id} failed`, error))));
  return running;
}
