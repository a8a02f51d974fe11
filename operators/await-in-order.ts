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
import { Observable, type OperatorFunction, type Subscriber } from "rxjs";
import { operate } from "../lib/rx/operate.js";

type Queued<T> = { item: T } | { end: "complete" } | { end: "error"; error: unknown };

export function awaitInOrder<T, R = T>(work: (item: T) => R | Promise<R>): OperatorFunction<T, R> {
  return (source) =>
    new Observable<R>((destination) => {
      /** Items and the source's end, in order, behind the pending promise; empty while none is pending. */
      const queue: Queued<T>[] = [];
      let waiting = false;

      /** Runs `work` on one item; false when it left a promise pending (or failed). */
      const pass = (item: T): boolean => {
        let result: R | Promise<R>;
        try {
          result = work(item);
        } catch (error) {
          destination.error(error);
          return false;
        }
        if (!(result instanceof Promise)) {
          destination.next(result);
          return true;
        }
        waiting = true;
        result.then(
          (replacement) => {
            waiting = false;
            destination.next(replacement);
            drain();
          },
          (error: unknown) => destination.error(error),
        );
        return false;
      };

      // The queue outlives the source's subscription; it stops once the subscriber left.
      const drain = () => {
        while (!waiting && queue.length > 0 && !destination.closed) {
          const next = queue.shift()!;
          if ("end" in next) return end(destination, next);
          if (!pass(next.item)) return;
        }
      };

      // Anything behind a pending promise, or behind items still being drained, takes its place in the queue.
      const mustQueue = () => waiting || queue.length > 0;
      // `operate` stops reading a synchronous source that goes on after the subscriber left: `work` has side
      // effects and must not run then.
      source.subscribe(
        operate({
          destination,
          next: (item) => {
            if (mustQueue()) queue.push({ item });
            else pass(item);
          },
          error: (error: unknown) => {
            if (mustQueue()) queue.push({ end: "error", error });
            else destination.error(error);
          },
          complete: () => {
            if (mustQueue()) queue.push({ end: "complete" });
            else destination.complete();
          },
        }),
      );
    });
}

function end<T, R>(destination: Subscriber<R>, queued: Exclude<Queued<T>, { item: T }>): void {
  if (queued.end === "complete") destination.complete();
  else destination.error(queued.error);
}
