/**
 * Ends an execution no run holds any more (a grace window ran out, or an
 * observer saw its task settle), under the thread's lease. A thread that
 * moved on — another execution, or a run holding the lease (a new turn
 * ends the old execution itself) — is left alone.
 */
import type { ThreadStore } from "../state/thread-store.js";
import { endExecution } from "./thread-transitions.js";

export async function endStoredExecution(store: ThreadStore, threadId: string, executionId: string): Promise<void> {
  const lease = await store.tryAcquire(threadId);
  if (!lease) return;
  try {
    const state = await store.load(threadId);
    if (!state || state.execution.executionId !== executionId || state.terminalExecutionIds.includes(executionId)) return;
    await store.save(endExecution(state), lease);
  } finally {
    await lease.release();
  }
}
