/**
 * The timing both replay executors (A2A 1.0 in `replay-executor.ts`, 0.3 in
 * `kernel-v03/replay-executor.ts`) give their lines: a line's recorded
 * delay, a test's hold on it, and the time each status is stamped with.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { HoldLine, ReplayTurn } from "./replay-executor.js";

export interface ReplayTimingOptions {
  holdLine?: HoldLine | undefined;
  /** Multiplies every delayMs. */
  timeScale: number;
}

export class ReplayTiming {
  /** The last status time handed out (ms): each status gets a later one, so they order as they were published. */
  private lastStatusAt = 0;

  constructor(private readonly options: ReplayTimingOptions) {}

  /** Now, or just after the last status time when the clock has not moved on since. */
  statusTime(): string {
    this.lastStatusAt = Math.max(Date.now(), this.lastStatusAt + 1);
    return new Date(this.lastStatusAt).toISOString();
  }

  /** Waits for a test's hold on a line, if any; false once the replay has been stopped. */
  async hold(turn: ReplayTurn, index: number, count: number, signal: AbortSignal): Promise<boolean> {
    const held = this.options.holdLine?.(turn, index, count);
    if (held && !signal.aborted) {
      const stopped = new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
      await Promise.race([held, stopped]);
    }
    return !signal.aborted;
  }

  /** Waits a recorded delay; false once the replay has been stopped. */
  async wait(delayMs: number, signal: AbortSignal): Promise<boolean> {
    const ms = delayMs * this.options.timeScale;
    if (ms > 0 && !signal.aborted) await sleep(ms, undefined, { signal }).catch(() => undefined);
    return !signal.aborted;
  }
}
