/**
 * How long a new run waits for the thread's previous run while that run is
 * being ended by its client's disconnect (a user who pressed Stop and sent
 * again at once), before the thread counts as busy.
 */
export const STOP_RESEND_WAIT_MS = 2000;

/**
 * The threads whose run is being ended because its client left (a user who
 * pressed Stop). Such a run lets its thread go within moments (its task
 * cancelled, its state written), so a new run on the thread waits for that
 * (up to STOP_RESEND_WAIT_MS) instead of being refused THREAD_BUSY. A run
 * whose client is still there is never waited for.
 */
export class LeavingRuns {
  readonly #leaving = new Map<string, Promise<void>>();

  constructor(private readonly waitMs: number = STOP_RESEND_WAIT_MS) {}

  /** The client of the thread's run left; `released` settles once the run has let the thread go. */
  add(threadId: string, released: Promise<void>): void {
    this.#leaving.set(threadId, released);
    const forget = () => {
      if (this.#leaving.get(threadId) === released) this.#leaving.delete(threadId);
    };
    released.then(forget, forget);
  }

  /** Waits up to the bound for the thread's leaving run to let go: true once it did, false at once when none is leaving. */
  async waitFor(threadId: string): Promise<boolean> {
    const released = this.#leaving.get(threadId);
    if (!released) return false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), this.waitMs)));
    try {
      return await Promise.race([
        released.then(
          () => true,
          () => true,
        ),
        timeout,
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Threads whose run is leaving now. */
  get size(): number {
    return this.#leaving.size;
  }
}
