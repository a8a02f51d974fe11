/**
 * A thread's state and lease for an HTTP answer: a file the store cannot
 * read becomes 503 `STATE_UNAVAILABLE` for that thread alone (contract §8),
 * and so does a shared store that cannot be reached, for every thread.
 */
import { AguiError } from "../errors.js";
import type { ThreadState } from "../state/thread-state.js";
import { StateUnavailableError, type ThreadLease, type ThreadStore } from "../state/thread-store.js";

export async function loadThread(store: ThreadStore, threadId: string): Promise<ThreadState | undefined> {
  try {
    return await store.load(threadId);
  } catch (error) {
    if (error instanceof StateUnavailableError) throw new AguiError("STATE_UNAVAILABLE", {}, { cause: error });
    throw error;
  }
}

/** The thread's lease, undefined when another run holds it. */
export async function acquireThread(store: ThreadStore, threadId: string): Promise<ThreadLease | undefined> {
  try {
    return await store.tryAcquire(threadId);
  } catch (error) {
    if (error instanceof StateUnavailableError) throw new AguiError("STATE_UNAVAILABLE", {}, { cause: error });
    throw error;
  }
}
