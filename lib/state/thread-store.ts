/**
 * The persistence boundary for thread state. It knows nothing of AG-UI
 * events. One JSON file per thread (`FileThreadStore`) for one process, or
 * one Redis key per thread (`RedisThreadStore`) shared by several service
 * instances, with the same leases and fencing across them.
 */
import type { ThreadSummary } from "./thread-listing.js";
import type { ThreadState } from "./thread-state.js";

/** Exclusive right to run on one thread; released when the run ends. */
export interface ThreadLease {
  readonly threadId: string;
  /**
   * The fencing token: greater than that of every lease taken on this
   * thread before. A save under a lease that is no longer the thread's
   * (released, or expired and taken by another instance) is refused, so a
   * holder that lost its lease cannot write.
   */
  readonly token: number;
  /** Gives the thread back if this lease still holds it; never throws (an unreachable store lets it expire). */
  release(): Promise<void>;
}

export interface SaveOptions {
  /**
   * An earlier write this one must follow: it lands only once `after` has
   * resolved, and not at all if `after` rejects (the save then rejects with
   * its error). The store may prepare the write meanwhile, which is the
   * point: a run's second write need not start from nothing when its first
   * commits.
   */
  after?: Promise<unknown>;
  /** What `prepareWrite` began for this save: the save takes it over, and uses it or throws it away. */
  prepared?: PreparedWrite;
  /**
   * Nothing waits on this write but its own run's end (not a run's first
   * events): the store keeps what may wait on other writes off the event
   * loop, at the cost of a turn, so that other runs' events are not held
   * meanwhile (the file store's rename, see `atomic-write.ts`).
   */
  offLoop?: boolean;
}

/** A save's work begun ahead (`ThreadStore.prepareWrite`): given to that save, or else discarded. */
export interface PreparedWrite {
  discard(): void;
}

export interface ThreadStore {
  /**
   * The thread's state, read lazily from its own file or key, or undefined
   * for a thread never seen. Throws `StateUnavailableError` when the stored
   * state cannot be read or is not a valid version-1 document for this
   * thread (that blocks only this thread), and when the store cannot be
   * reached (every thread).
   */
  load(threadId: string): Promise<ThreadState | undefined>;
  /**
   * Replaces the thread's state atomically. Throws `StatePersistenceError`,
   * also for a state that `load` could not read back (larger than its cap):
   * such a state is refused, never written. Under `lease`, the write
   * happens only while that lease still holds the thread, checked by the
   * store as it writes (StatePersistenceError otherwise). Every write of the
   * service passes its lease; without one the write is unfenced (tools, tests).
   */
  save(state: ThreadState, lease?: ThreadLease, options?: SaveOptions): Promise<void>;
  /**
   * Begins the thread's next save before its state is known, where the
   * store has work that does not depend on it (the file store creates its
   * temp file), so that a caller with other work to wait for first (an
   * admission's reads and checks) finds the write shorter. Never throws;
   * undefined when there is nothing to begin.
   */
  prepareWrite?(threadId: string): PreparedWrite | undefined;
  /**
   * The thread's lease, or undefined when another run holds it. Throws
   * `StateUnavailableError` when the store cannot be reached.
   */
  tryAcquire(threadId: string): Promise<ThreadLease | undefined>;
  /**
   * True when other instances take leases in this store too: a thread held
   * with no run in this process is then likely a run of another instance.
   */
  readonly shared?: boolean;
  /**
   * Up to `limit` stored threads, the most recently saved first, chosen
   * among at most `MAX_THREADS_SCANNED` (`thread-listing.ts`); a thread
   * whose state cannot be read is left out. Throws `StateUnavailableError`
   * when the store cannot be reached. Absent: the store cannot list.
   */
  listThreads?(limit: number): Promise<ThreadSummary[]>;
  /** Whether the store can be reached and written now (readiness); absent, the caller checks what it knows. */
  available?(): Promise<boolean>;
  /** Lets go of what the store holds open (a connection); absent when there is nothing. */
  close?(): Promise<void>;
}

export class StateUnavailableError extends Error {
  override name = "StateUnavailableError";
}

export class StatePersistenceError extends Error {
  override name = "StatePersistenceError";
}
