/**
 * A thread's state for an HTTP answer: a file the store cannot read
 * becomes 503 `STATE_UNAVAILABLE` for that thread alone (contract §8).
 */
import { AguiError } from "../errors.js";
import type { ThreadState } from "../state/thread-state.js";
import { StateUnavailableError, type ThreadStore } from "../state/thread-store.js";

export async function loadThread(store: ThreadStore, threadId: string): Promise<ThreadState | undefined> {
  try {
    return await store.load(threadId);
  } catch (error) {
    if (error instanceof StateUnavailableError) throw new AguiError("STATE_UNAVAILABLE", {}, { cause: error });
    throw error;
  }
}
