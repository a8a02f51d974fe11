/**
 * `mergeMap` for a function that returns a plain array: each item becomes
 * the items of its array, in order, synchronously; or one item, returned as
 * it is, not in an array (the items this stage makes are never arrays). A
 * projector passes most items unchanged, and an array of one per item and
 * per stage was most of what the chain allocated. The projectors map every
 * kernel signal this way, and `mergeMap` pays for inner-subscription
 * machinery on each item (the operator chain's main cost in `npm run
 * bench`); this is a loop. An exception in `project` errors the stream, as
 * it would in `mergeMap`.
 *
 * The stage subscribes to its source with one `OperatorSubscriber` (see
 * `lib/rx/operate.ts`) that overrides `_next` with the loop itself, rather
 * than passing `operate` a `next` handler: on this path every call counts,
 * and the handler would be one more per item and per stage. The end, the
 * errors and the teardown are the helper's. A plain observer object would
 * cost more still: RxJS wraps it per subscription in a SafeSubscriber, a
 * ConsumerObserver and three bound functions, and passes every item
 * through them.
 *
 *   a b c  (a → [x, y], b → [], c → z)  →  (xy) - z
 */
import { Observable, type OperatorFunction, type Subscriber } from "rxjs";
import { OperatorSubscriber } from "../lib/rx/operate.js";

class EmitEachSubscriber<T, R> extends OperatorSubscriber<T, R> {
  #index = 0;

  constructor(
    destination: Subscriber<R>,
    private readonly project: (item: T, index: number) => R | readonly R[],
  ) {
    super({ destination });
  }

  protected override _next(item: T): void {
    let out: R | readonly R[];
    try {
      out = this.project(item, this.#index++);
    } catch (error) {
      this.downstream.error(error);
      return;
    }
    if (!Array.isArray(out)) {
      this.downstream.next(out as R);
      return;
    }
    // `downstream`, not `this.destination`: a downstream that leaves in the middle of one item's array (take(1))
    // must not turn the rest of the loop into a TypeError. An indexed loop: no iterator per item.
    const items = out as readonly R[];
    for (let i = 0; i < items.length; i++) this.downstream.next(items[i]!);
  }
}

export function emitEach<T, R>(project: (item: T, index: number) => R | readonly R[]): OperatorFunction<T, R> {
  return (source) => new Observable<R>((destination) => source.subscribe(new EmitEachSubscriber(destination, project)));
}
