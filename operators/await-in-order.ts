/**
 * Waits on the items that need asynchronous work, and only on those,
 * keeping the stream's order: an item for which `work` returns a promise
 * holds back everything after it until the promise gives its replacement;
 * every other item (`work` returns it as is) passes at once. Most run items
 * need no I/O, and a `concatMap` over an async function would cost each of
 * them a promise, a microtask and an inner subscription; while nothing is
 * pending, an item is not even queued.
 *
 *   a b c  (b → promise of B, resolving later)  →  a ---B c
 *
 * `work` may also turn each item into another type (a record into its
 * result): the order and the waiting are the same.
 */
import type { OperatorFunction, Subscriber } from "rxjs";
import { OperatorSubscriber, operatorOf } from "../lib/rx/operate.js";

type Queued<T> = { item: T } | { end: "complete" } | { end: "error"; error: unknown };

export function awaitInOrder<T, R = T>(work: (item: T) => R | Promise<R>): OperatorFunction<T, R> {
  return operatorOf((destination: Subscriber<R>) => new AwaitInOrderSubscriber(destination, work));
}

/**
 * One subscriber and no closures per subscription (see `OperatorSubscriber`
 * on overriding `_next`): every stream keeps this stage's subscribers for as
 * long as it is open, a run has three of them, and handlers made per
 * subscription cost about 0.4 KiB each time. `operate` stops reading a
 * synchronous source that goes on after the subscriber left: `work` has
 * side effects and must not run then.
 */
class AwaitInOrderSubscriber<T, R> extends OperatorSubscriber<T, R> {
  /** Items and the source's end, in order, behind the pending promise; absent or empty while none is pending. */
  #queue: Queued<T>[] | undefined;
  #waiting = false;

  constructor(
    destination: Subscriber<R>,
    private readonly work: (item: T) => R | Promise<R>,
  ) {
    super({ destination });
  }

  protected override _next(item: T): void {
    try {
      if (this.#mustQueue()) this.#enqueue({ item });
      else this.#pass(item);
    } catch (thrown) {
      this.downstream.error(thrown);
    }
  }

  protected override _error(error: unknown): void {
    if (!this.#mustQueue()) return super._error(error);
    this.#enqueue({ end: "error", error });
    this.unsubscribe();
  }

  protected override _complete(): void {
    if (!this.#mustQueue()) return super._complete();
    this.#enqueue({ end: "complete" });
    this.unsubscribe();
  }

  /** Anything behind a pending promise, or behind items still being drained, takes its place in the queue. */
  #mustQueue(): boolean {
    return this.#waiting || (this.#queue !== undefined && this.#queue.length > 0);
  }

  #enqueue(queued: Queued<T>): void {
    (this.#queue ??= []).push(queued);
  }

  /** Runs `work` on one item; false when it left a promise pending (or failed). */
  #pass(item: T): boolean {
    const destination = this.downstream;
    let result: R | Promise<R>;
    try {
      result = this.work(item);
    } catch (error) {
      destination.error(error);
      return false;
    }
    if (!(result instanceof Promise)) {
      destination.next(result);
      return true;
    }
    this.#waiting = true;
    result.then(
      (replacement) => {
        this.#waiting = false;
        destination.next(replacement);
        this.#drain();
      },
      (error: unknown) => destination.error(error),
    );
    return false;
  }

  /** The queue outlives the source's subscription; it stops once the subscriber downstream left. */
  #drain(): void {
    const queue = this.#queue;
    const destination = this.downstream;
    while (!this.#waiting && queue !== undefined && queue.length > 0 && !destination.closed) {
      const next = queue.shift()!;
      if ("end" in next) return end(destination, next);
      if (!this.#pass(next.item)) return;
    }
  }
}

function end<T, R>(destination: Subscriber<R>, queued: Exclude<Queued<T>, { item: T }>): void {
  if (queued.end === "complete") destination.complete();
  else destination.error(queued.error);
}
