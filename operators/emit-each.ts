/**
 * `mergeMap` for a function that returns a plain array: each item becomes
 * the items of its array, in order, synchronously. The projectors map every
 * kernel signal this way, and `mergeMap` pays for inner-subscription
 * machinery on each item (the operator chain's main cost in `npm run
 * bench`); this is a loop. An exception in `project` errors the stream, as
 * it would in `mergeMap`.
 *
 * The stage subscribes to its source with one `Subscriber` of its own
 * rather than a plain observer object, which RxJS would wrap per
 * subscription in a SafeSubscriber, a ConsumerObserver and three bound
 * functions, and pass every item through.
 *
 *   a b  (a → [x, y], b → [])  →  (xy) -
 */
import { Observable, Subscriber, type OperatorFunction } from "rxjs";

class EmitEachSubscriber<T, R> extends Subscriber<T> {
  #index = 0;

  constructor(
    // Kept apart from `this.destination`, which RxJS sets to null on unsubscribe: a downstream that leaves
    // in the middle of one item's array (take(1)) must not turn the rest of the loop into a TypeError.
    private readonly downstream: Subscriber<R>,
    private readonly project: (item: T, index: number) => readonly R[],
  ) {
    // Chained to the downstream subscriber: its unsubscription ends this one too.
    super(downstream);
  }

  protected override _next(item: T): void {
    let out: readonly R[];
    try {
      out = this.project(item, this.#index++);
    } catch (error) {
      this.downstream.error(error);
      return;
    }
    for (const next of out) this.downstream.next(next);
  }
}

export function emitEach<T, R>(project: (item: T, index: number) => readonly R[]): OperatorFunction<T, R> {
  return (source) => new Observable<R>((subscriber) => source.subscribe(new EmitEachSubscriber(subscriber, project)));
}
