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

export function continueAfterDrop<T>(reattach: () => Observable<T>, attempts = 1): MonoTypeOperatorFunction<T> {
  return (source) =>
    new Observable<T>((subscriber) => {
      let left = attempts;
      let current = source.subscribe({ next: (item) => subscriber.next(item), error: dropped, complete: () => dropped(undefined) });
      function dropped(error: unknown) {
        if (left === 0) return error === undefined ? subscriber.complete() : subscriber.error(error);
        left -= 1;
        current = reattach().subscribe({ next: (item) => subscriber.next(item), error: dropped, complete: () => dropped(undefined) });
      }
      return () => current.unsubscribe();
    });
}
