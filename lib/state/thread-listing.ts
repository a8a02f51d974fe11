/**
 * What a store tells of its threads for a list of them (the sandbox's
 * threads panel, `GET /extensions/iac-code/v1/threads`): who they are, when
 * they were last written, and whether a run holds one or an interrupt waits
 * on it. Never a thread's conversation or ids beyond its own.
 *
 * A list is bounded twice: at most `limit` threads come back, and a store
 * looks at no more than `MAX_THREADS_SCANNED` stored threads to choose them,
 * so a list costs the same with a million threads as with ten thousand (it
 * is then the newest of those looked at, not of all).
 */
import type { ThreadState } from "./thread-state.js";

export const MAX_THREADS_SCANNED = 10_000;
export const MAX_THREADS_LISTED = 200;

export interface ThreadSummary {
  threadId: string;
  /** When its state was last saved, in ms since the epoch; 0 when the store cannot tell (a state written before it kept the time). */
  updatedAt: number;
  /** A lease holds the thread: a run is on it (in this process, or in any instance sharing the store). */
  running: boolean;
  /** Interrupts that wait for an answer. */
  pendingInterrupts: number;
}

/** A summary of a stored state. */
export function summaryOf(state: ThreadState, updatedAt: number, running: boolean): ThreadSummary {
  return { threadId: state.threadId, updatedAt, running, pendingInterrupts: Object.keys(state.execution.pending).length };
}

/** The newest first; equal times in thread id order, so a list is the same each time it is asked. */
export function newestFirst<T extends { updatedAt: number; name: string }>(entries: T[], limit: number): T[] {
  return entries.sort((a, b) => b.updatedAt - a.updatedAt || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)).slice(0, limit);
}
