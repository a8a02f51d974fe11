/**
 * Waits on the items that need asynchronous work, and only on those,
 * keeping the stream's order: an item for which `work` returns a promise
 * holds back everything after it until the promise gives its replacement;
 * every other item (`work` returns it as is) passes at once. Most run items
 * need no I/O, and a `concatMap` over an async function would cost each of
 * them a promise, a microtask and an inner subscription.
 *
 *   a b c  (b → promise of B, resolving later)  →  a ---B c
 */
import { Observable, type MonoTypeOperatorFunction } from "rxjs";

export function awaitInOrder<T>(work: (item: T) => T | Promise<T>): MonoTypeOperatorFunction<T> {
  return (source) =>
    new Observable<T>((subscriber) => {
      /** Items and the source's end, in order, behind a pending promise. */
      const queue: Array<{ item: T } | { end: "complete" } | { end: "error"; error: unknown }> = [];
      let waiting = false;

      const drain = () => {
        while (!waiting && queue.length > 0 && !subscriber.closed) {
          const next = queue.shift()!;
          if ("end" in next) return next.end === "complete" ? subscriber.complete() : subscriber.error(next.error);
          let result: T | Promise<T>;
          try {
            result = work(next.item);
          } catch (error) {
            return subscriber.error(error);
          }
          if (!(result instanceof Promise)) {
            subscriber.next(result);
            continue;
          }
          waiting = true;
          result.then(
            (item) => {
              waiting = false;
              subscriber.next(item);
              drain();
            },
            (error: unknown) => subscriber.error(error),
          );
        }
      };

      return source.subscribe({
        next: (item) => {
          queue.push({ item });
          drain();
        },
        error: (error: unknown) => {
          queue.push({ end: "error", error });
          drain();
        },
        complete: () => {
          queue.push({ end: "complete" });
          drain();
        },
      });
    });
}
