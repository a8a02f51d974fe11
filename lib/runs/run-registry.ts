/**
 * The runs this process is streaming, so that a shutdown (SIGTERM, SIGINT;
 * see `server.ts`) can drain them: refuse new runs, give the ones in flight
 * a window to end by themselves, then stop each one still going.
 *
 * A run is stopped from outside its pipeline, through the A2A client it is
 * given (`clientFor`). Once its stop signal fires, every kernel stream it
 * reads fails with the signal's reason (an AguiError
 * `SERVICE_SHUTTING_DOWN`) and every kernel call it awaits is rejected with
 * it, so the pipeline ends the run as on any kernel failure before the task
 * settled: it cancels the task, closes every open span and sends RUN_ERROR
 * with that code. Cancels (and the ListTasks that finds a task by its
 * context) always go through, and the drain waits for them. A run paused
 * at interrupts is no longer in flight: it stays on disk as it is.
 */
import { Observable, type Subscriber } from "rxjs";
import { AguiError } from "../errors.js";
import type { RunA2A } from "../a2a/client.js";
import { waitUntil } from "./wait-until.js";

export interface DrainReport {
  /** Runs in flight when the drain began. */
  inFlight: number;
  /** Of those, the ones that ended by themselves within the window. */
  ended: number;
  /** The ones still going when the window ran out, stopped with the drain's error. */
  stopped: number;
}

export interface DrainOptions {
  windowMs: number;
  /** What a stopped run ends with. */
  reason: AguiError;
  /** How long stopped runs may take to send their end, and their cancels to reach the kernel. */
  settleMs?: number;
}

export const DEFAULT_SETTLE_MS = 5000;

export class RunRegistry {
  readonly #runs = new Set<RunStop>();
  /** Kernel calls that must be made before the process exits: the cancels of runs that ended. */
  readonly #calls = new Set<Promise<unknown>>();
  /** Called whenever a run leaves. */
  readonly #onLeave = new Set<() => void>();
  #drainEndsAt: number | undefined;
  #endWindow: (() => void) | undefined;
  #windowEndedEarly = false;

  constructor(private readonly now: () => number = Date.now) {}

  get draining(): boolean {
    return this.#drainEndsAt !== undefined;
  }

  /** Runs in flight now. */
  get size(): number {
    return this.#runs.size;
  }

  /** Before a run's body is read: while draining, `SERVICE_UNAVAILABLE`, with how long to wait before trying again. */
  refuseIfDraining(): void {
    if (this.#drainEndsAt === undefined) return;
    const retryAfterS = Math.max(1, Math.ceil((this.#drainEndsAt - this.now()) / 1000));
    throw new AguiError("SERVICE_UNAVAILABLE", {}, { retryAfterS });
  }

  /**
   * Counts a run in flight until its client's connection closes, and gives
   * the signal that stops it. Throws `SERVICE_UNAVAILABLE` while draining (a
   * body may finish arriving after the drain began).
   */
  enter(client: { onClose(listener: () => void): void }): RunStop {
    this.refuseIfDraining();
    const run = new RunStop();
    this.#runs.add(run);
    client.onClose(() => {
      this.#runs.delete(run);
      for (const listener of [...this.#onLeave]) listener();
    });
    return run;
  }

  /** `a2a` as a run stopped by `stop` sees it (see the file comment). Arguments pass through as they are. */
  clientFor(a2a: RunA2A, stop: RunStop): RunA2A {
    return new StoppableKernel(a2a, stop, this.#track);
  }

  /**
   * Refuses new runs from now on, waits up to `windowMs` for the runs in
   * flight to end, stops the rest with `reason`, and waits (up to
   * `settleMs` each) for them to end and for their cancels to be made.
   */
  async drain({ windowMs, reason, settleMs = DEFAULT_SETTLE_MS }: DrainOptions): Promise<DrainReport> {
    this.#drainEndsAt ??= this.now() + windowMs;
    const inFlight = this.#runs.size;
    await this.#untilNoRuns(windowMs, (endNow) => {
      this.#endWindow = endNow;
      // A second signal before this wait began ends the window at once.
      if (this.#windowEndedEarly) endNow();
    });
    this.#endWindow = undefined;
    const left = [...this.#runs];
    for (const run of left) run.stop(reason);
    await this.#untilNoRuns(settleMs);
    await this.#untilCallsMade(settleMs);
    return { inFlight, ended: inFlight - left.length, stopped: left.length };
  }

  /** Ends the drain window now (a second signal): the runs still going are stopped at once. */
  endWindowNow(): void {
    this.#windowEndedEarly = true;
    this.#endWindow?.();
  }

  readonly #track = <T>(call: Promise<T>): Promise<T> => {
    this.#calls.add(call);
    const done = () => this.#calls.delete(call);
    call.then(done, done);
    return call;
  };

  /** Resolves when no run is in flight, after `ms`, or when `onEarlyEnd`'s function is called, whichever comes first. */
  #untilNoRuns(ms: number, onEarlyEnd?: (endNow: () => void) => void): Promise<void> {
    return waitUntil(() => this.#runs.size === 0, this.#onLeave, ms, onEarlyEnd);
  }

  async #untilCallsMade(ms: number): Promise<void> {
    const deadline = this.now() + ms;
    // A call may lead to another (ListTasks, then CancelTask): wait until none is left.
    while (this.#calls.size > 0 && this.now() < deadline) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, deadline - this.now())));
      await Promise.race([Promise.allSettled([...this.#calls]), timeout]);
      clearTimeout(timer);
    }
  }
}

/**
 * What stops one run: told once, with a reason, to whatever waits on the
 * run's kernel then. An AbortController did this, but its signal's
 * EventTarget holds about 0.8 KiB of maps and listener records for as long
 * as the run is open; this holds its listeners in an array.
 */
export class RunStop {
  #stopped = false;
  #reason: unknown;
  // Copied at each change, not pushed onto: a pushed array keeps room for 16 more, and a run mostly holds one.
  // `concat`, not a spread: `[...listeners, listener]` gets the same spare room (about 130 bytes a run).
  #listeners: ReadonlyArray<() => void> = [];

  get stopped(): boolean {
    return this.#stopped;
  }

  get reason(): unknown {
    return this.#reason;
  }

  /** Stops the run (once): each listener is told, in the order it came, and forgotten. */
  stop(reason: unknown): void {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#reason = reason;
    const listeners = this.#listeners;
    this.#listeners = [];
    for (const listener of listeners) listener();
  }

  /** `listener` is told when the run stops (a run stopped already tells nobody: check `stopped` first). */
  listen(listener: () => void): void {
    if (!this.#stopped) this.#listeners = this.#listeners.concat(listener);
  }

  forget(listener: () => void): void {
    if (this.#listeners.includes(listener)) this.#listeners = this.#listeners.filter((each) => each !== listener);
  }
}

type Client = RunA2A;

/**
 * A run's kernel, stopped by `stop`: one object whose methods are its
 * class's, rather than one closure per method for each run, since every
 * open stream holds its kernel client for as long as it lasts.
 */
class StoppableKernel implements RunA2A {
  constructor(
    private readonly a2a: RunA2A,
    private readonly stop: RunStop,
    private readonly track: <T>(call: Promise<T>) => Promise<T>,
  ) {}

  sendStreamingMessage(...args: Parameters<Client["sendStreamingMessage"]>) {
    return untilStopped(this.stop, () => this.a2a.sendStreamingMessage(...args));
  }
  subscribeToTask(...args: Parameters<Client["subscribeToTask"]>) {
    return untilStopped(this.stop, () => this.a2a.subscribeToTask(...args));
  }
  sendMessage(...args: Parameters<Client["sendMessage"]>) {
    return rejectOnStop(this.stop, () => this.a2a.sendMessage(...args));
  }
  getTask(...args: Parameters<Client["getTask"]>) {
    return rejectOnStop(this.stop, () => this.a2a.getTask(...args));
  }
  getPipelineState(...args: Parameters<Client["getPipelineState"]>) {
    return rejectOnStop(this.stop, () => this.a2a.getPipelineState(...args));
  }
  ensureRestored(...args: Parameters<Client["ensureRestored"]>) {
    return rejectOnStop(this.stop, () => this.a2a.ensureRestored(...args));
  }
  // Cancels (and the ListTasks that finds a task by its context) always go through, and the drain waits for them.
  cancelTask(...args: Parameters<Client["cancelTask"]>) {
    return this.track(this.a2a.cancelTask(...args));
  }
  listTasks(...args: Parameters<Client["listTasks"]>) {
    return this.track(this.a2a.listTasks(...args));
  }
}

/** `source`, failing with the stop's reason when `stop` fires (and unsubscribed from then). */
function untilStopped<T>(stop: RunStop, source: () => Observable<T>): Observable<T> {
  return new Observable<T>((subscriber) => {
    if (stop.stopped) return subscriber.error(stop.reason);
    return failingOnStop(stop, subscriber, source);
  });
}

/**
 * Outside `untilStopped`, whose scope holds `source` (and through it the
 * call's arguments: the user's message, for a new turn): the listener and
 * the teardown a stream keeps while it is open hold only what they use
 * (`source` is called here, and kept by no closure).
 */
function failingOnStop<T>(stop: RunStop, subscriber: Subscriber<T>, source: () => Observable<T>): () => void {
  const onStop = () => subscriber.error(stop.reason);
  stop.listen(onStop);
  const subscription = source().subscribe(subscriber);
  return () => {
    stop.forget(onStop);
    subscription.unsubscribe();
  };
}

/** The call's answer, or the stop's reason if `stop` fires first. */
function rejectOnStop<T>(stop: RunStop, call: () => Promise<T>): Promise<T> {
  if (stop.stopped) return Promise.reject(stop.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onStop = () => reject(stop.reason as Error);
    stop.listen(onStop);
    call()
      .then(resolve, reject)
      .finally(() => stop.forget(onStop));
  });
}
