/**
 * Follows the kernel past a dropped stream: when the source ends — or fails
 * — before the run was over, subscribes to `reattach()` instead and goes
 * on with it. Downstream ends the run (and unsubscribes) on a settled task,
 * so an end that reaches this operator is a drop. At most `attempts`
 * re-attachments; a failure after those reaches downstream as usual.
 *
 *   source: -a-b|            reattach: -c-d|
 *   result: -a-b-c-d|
 */
import { Observable, type MonoTypeOperatorFunction } from "rxjs";
import { operate } from "../lib/rx/operate.js";

export function continueAfterDrop<T>(reattach: () => Observable<T>, attempts = 1): MonoTypeOperatorFunction<T> {
  return (source) =>
    new Observable<T>((destination) => {
      let left = attempts;
      // Each attempt's subscriber is chained to `destination`, so the one running when the subscriber leaves is
      // left with it; no variable names the current one, which a source that ends synchronously (inside its own
      // `subscribe`) could not assign in time.
      const follow = (stream: Observable<T>) =>
        stream.subscribe(operate({ destination, error: dropped, complete: () => dropped(undefined) }));
      function dropped(error: unknown) {
        if (left === 0) return error === undefined ? destination.complete() : destination.error(error);
        left -= 1;
        follow(reattach());
      }
      follow(source);
    });
}
