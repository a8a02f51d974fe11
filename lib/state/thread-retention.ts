/**
 * How long a thread nobody uses is kept (`IAC_CODE_AGUI_THREAD_RETENTION_S`):
 * the file store's sweep removes it and Redis expires it once it has been
 * idle, that is unsaved, that long. A pending interrupt keeps its thread at
 * least until the interrupt expires (one with no expiry keeps it for good):
 * the answer may still come, and it needs the thread.
 */
import type { ThreadState } from "./thread-state.js";

/** Thirty days: a conversation left over a holiday is still there. */
export const DEFAULT_THREAD_RETENTION_S = 30 * 24 * 60 * 60;

/**
 * Until when (epoch ms) `state`, saved at `savedAtMs`, is kept: the
 * retention after that save, or later while a pending interrupt has not
 * expired; `Infinity` while one never expires, or when retention is off (0).
 */
export function keptUntilMs(state: Pick<ThreadState, "execution">, savedAtMs: number, retentionMs: number): number {
  if (retentionMs <= 0) return Infinity;
  let until = savedAtMs + retentionMs;
  for (const pending of Object.values(state.execution.pending)) {
    if (pending.expiresAt === undefined) return Infinity;
    const expiresAtMs = Date.parse(pending.expiresAt);
    // An expiry that cannot be read is treated as none: keeping a thread is the safe mistake.
    if (Number.isNaN(expiresAtMs)) return Infinity;
    until = Math.max(until, expiresAtMs);
  }
  return until;
}
