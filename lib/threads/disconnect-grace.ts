/**
 * The grace window of R-SIB-7: a client that drops off a running run may
 * come back as an observer (the subscribe route) before its task is
 * cancelled. Each abandoned execution is held for `graceMs`; an observer
 * claims it and holds it again if it leaves before the task settles; a new
 * turn on the thread ends the wait at once. With `graceMs` 0 (the default)
 * nothing is held and a disconnect cancels at once, as before.
 *
 * `LocalDisconnectGrace` holds the window in this process;
 * `disconnect-grace-redis.ts` shares it between instances, so a client of
 * instance A may come back through instance B.
 */
export interface HeldExecution {
  threadId: string;
  executionId: string;
  /** The task the window keeps running. */
  taskId: string;
  /** Cancels the task and ends the execution; called once, when the wait is over. */
  expire: () => void;
}

/** The window as its callers use it: answers may come from another process, hence the promises. */
export interface DisconnectGrace {
  readonly enabled: boolean;
  hold(execution: HeldExecution): void;
  /** An observer came back for the execution: no cancel while it watches. False when nothing is held. */
  claim(executionId: string): boolean | Promise<boolean>;
  /** The observer left: the task settled (the wait is over), or it did not (the wait starts again). */
  unclaim(executionId: string, settled: boolean): void;
  /** A new turn on the thread: whatever was held for it is given up now (expired once this settles). */
  expireThread(threadId: string): void | Promise<void>;
  /** The execution's client left and may still come back: it is open on purpose, not abandoned. */
  holds(executionId: string): boolean | Promise<boolean>;
}

interface Hold extends HeldExecution {
  timer: ReturnType<typeof setTimeout> | undefined;
  observers: number;
}

export class LocalDisconnectGrace implements DisconnectGrace {
  readonly #held = new Map<string, Hold>();

  constructor(readonly graceMs: number) {}

  get enabled(): boolean {
    return this.graceMs > 0;
  }

  hold(execution: HeldExecution): void {
    const hold: Hold = { ...execution, timer: undefined, observers: 0 };
    this.#held.set(execution.executionId, hold);
    this.#arm(hold);
  }

  claim(executionId: string): boolean {
    const hold = this.#held.get(executionId);
    if (!hold) return false;
    clearTimeout(hold.timer);
    hold.timer = undefined;
    hold.observers += 1;
    return true;
  }

  unclaim(executionId: string, settled: boolean): void {
    const hold = this.#held.get(executionId);
    if (!hold) return;
    hold.observers -= 1;
    if (settled) this.#held.delete(executionId);
    else if (hold.observers === 0) this.#arm(hold);
  }

  expireThread(threadId: string): void {
    for (const hold of [...this.#held.values()]) if (hold.threadId === threadId) this.#expire(hold);
  }

  #arm(hold: Hold): void {
    hold.timer = setTimeout(() => this.#expire(hold), this.graceMs);
    hold.timer.unref?.();
  }

  #expire(hold: Hold): void {
    clearTimeout(hold.timer);
    if (this.#held.get(hold.executionId) !== hold) return;
    this.#held.delete(hold.executionId);
    hold.expire();
  }

  holds(executionId: string): boolean {
    return this.#held.has(executionId);
  }

  /** Executions held now. */
  get size(): number {
    return this.#held.size;
  }
}
