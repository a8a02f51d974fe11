/**
 * `mergeMap` for a function that returns a plain array: each item becomes
 * the items of its array, in order, synchronously. The projectors map every
 * kernel signal this way, and `mergeMap` pays for inner-subscription
 * machinery on each item (the operator chain's main cost in `npm run
 * bench`); this is a loop. An exception in `project` errors the stream, as
 * it would in `mergeMap`.
 *
 *   a b  (a → [x, y], b → [])  →  (xy) -
 */
import { Observable, type OperatorFunction } from "rxjs";

export function emitEach<T, R>(project: (item: T, index: number) => readonly R[]): OperatorFunction<T, R> {
  return (source) =>
    new Observable<R>((subscriber) => {
      let index = 0;
      return source.subscribe({
        next: (item) => {
          let out: readonly R[];
          try {
            out = project(item, index++);
          } catch (error) {
            subscriber.error(error);
            return;
          }
          for (const next of out) subscriber.next(next);
        },
        error: (error: unknown) => subscriber.error(error),
        complete: () => subscriber.complete(),
      });
    });
}
