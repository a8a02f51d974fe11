/**
 * The persistence boundary for thread state. It knows nothing of AG-UI
 * events. Today one JSON file per thread (`FileThreadStore`); a shared store
 * (Redis, with the same per-thread leases) can stand behind the same
 * interface so that several service instances share threads.
 */
import type { ThreadState } from "./thread-state.js";

/** Exclusive right to run on one thread; released when the run ends. */
export interface ThreadLease {
  readonly threadId: string;
  release(): Promise<void>;
}

export interface ThreadStore {
  /**
   * The thread's state, read lazily from its own file, or undefined for a
   * thread never seen. Throws `StateUnavailableError` when the stored state
   * cannot be read or is not a valid version-1 document for this thread:
   * that blocks only this thread.
   */
  load(threadId: string): Promise<ThreadState | undefined>;
  /**
   * Replaces the thread's state atomically. Throws `StatePersistenceError`,
   * also for a state that `load` could not read back (larger than its cap):
   * such a state is refused, never written.
   */
  save(state: ThreadState): Promise<void>;
  /** The thread's lease, or undefined when another run holds it. */
  tryAcquire(threadId: string): Promise<ThreadLease | undefined>;
}

export class StateUnavailableError extends Error {
  override name = "StateUnavailableError";
}

export class StatePersistenceError extends Error {
  override name = "StatePersistenceError";
}
