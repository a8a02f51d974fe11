/**
 * How many of a managed kernel's output lines reach the log: a token
 * bucket, `burst` lines at once and `perSecond` after that. A kernel that
 * floods its output (a loop printing, a debug level left on) would
 * otherwise turn into hundreds of thousands of records, each written
 * synchronously on the event loop every run shares. The lines past the
 * budget are counted, not kept, and the count is told in one record before
 * the next line that passes, or within a second when none comes.
 */

/** Lines a second the log takes from a kernel once its burst is spent. */
export const KERNEL_OUTPUT_LINES_PER_S = 100;
/** Lines the log takes at once: a start-up banner, a stack trace. */
export const KERNEL_OUTPUT_BURST = 500;
const REPORT_AFTER_MS = 1000;

export interface OutputBudgetOptions {
  perSecond?: number;
  burst?: number;
  now?: () => number;
}

export class OutputBudget {
  readonly #perSecond: number;
  readonly #burst: number;
  readonly #now: () => number;
  readonly #reportDropped: (dropped: number) => void;
  #tokens: number;
  #filledAt: number;
  #dropped = 0;
  #reportTimer: NodeJS.Timeout | undefined;

  /** `reportDropped` is told how many lines were left out since it was last told. */
  constructor(reportDropped: (dropped: number) => void, options: OutputBudgetOptions = {}) {
    this.#perSecond = options.perSecond ?? KERNEL_OUTPUT_LINES_PER_S;
    this.#burst = options.burst ?? KERNEL_OUTPUT_BURST;
    this.#now = options.now ?? Date.now;
    this.#reportDropped = reportDropped;
    this.#tokens = this.#burst;
    this.#filledAt = this.#now();
  }

  /** Whether the next line may be logged; when it may, the lines left out before it are told first. */
  take(): boolean {
    const now = this.#now();
    this.#tokens = Math.min(this.#burst, this.#tokens + ((now - this.#filledAt) / 1000) * this.#perSecond);
    this.#filledAt = now;
    if (this.#tokens >= 1) {
      this.#tokens -= 1;
      this.flush();
      return true;
    }
    this.#dropped += 1;
    this.#reportTimer ??= setTimeout(() => this.flush(), REPORT_AFTER_MS).unref();
    return false;
  }

  /** Tells the lines left out so far, if any (also when the kernel's output ends). */
  flush(): void {
    clearTimeout(this.#reportTimer);
    this.#reportTimer = undefined;
    if (this.#dropped === 0) return;
    const dropped = this.#dropped;
    this.#dropped = 0;
    this.#reportDropped(dropped);
  }
}
