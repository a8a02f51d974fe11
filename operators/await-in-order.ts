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
 */
import { Observable, type MonoTypeOperatorFunction, type Subscriber } from "rxjs";

type Queued<T> = { item: T } | { end: "complete" } | { end: "error"; error: unknown };

export function awaitInOrder<T>(work: (item: T) => T | Promise<T>): MonoTypeOperatorFunction<T> {
  return (source) =>
    new Observable<T>((subscriber) => {
      /** Items and the source's end, in order, behind the pending promise; empty while none is pending. */
      const queue: Queued<T>[] = [];
      let waiting = false;

      /** Runs `work` on one item; false when it left a promise pending (or failed). */
      const pass = (item: T): boolean => {
        let result: T | Promise<T>;
        try {
          result = work(item);
        } catch (error) {
          subscriber.error(error);
          return false;
        }
        if (!(result instanceof Promise)) {
          subscriber.next(result);
          return true;
        }
        waiting = true;
        result.then(
          (replacement) => {
            waiting = false;
            subscriber.next(replacement);
            drain();
          },
          (error: unknown) => subscriber.error(error),
        );
        return false;
      };

      const drain = () => {
        while (!waiting && queue.length > 0 && !subscriber.closed) {
          const next = queue.shift()!;
          if ("end" in next) return end(subscriber, next);
          if (!pass(next.item)) return;
        }
      };

      // Anything behind a pending promise, or behind items still being drained, takes its place in the queue.
      const mustQueue = () => waiting || queue.length > 0;
      // A synchronous source may go on after the subscriber left; `work` has side effects and must not run then.
      return source.subscribe({
        next: (item) => {
          if (subscriber.closed) return;
          if (mustQueue()) queue.push({ item });
          else pass(item);
        },
        error: (error: unknown) => {
          if (subscriber.closed) return;
          if (mustQueue()) queue.push({ end: "error", error });
          else subscriber.error(error);
        },
        complete: () => {
          if (subscriber.closed) return;
          if (mustQueue()) queue.push({ end: "complete" });
          else subscriber.complete();
        },
      });
    });
}

function end<T>(subscriber: Subscriber<T>, queued: Exclude<Queued<T>, { item: T }>): void {
  if (queued.end === "complete") subscriber.complete();
  else subscriber.error(queued.error);
}
