/**
 * Calls `abandoned` when the subscriber leaves before the source has ended
 * (a client that disconnects mid-run), and never after a normal end or an
 * error. The run uses it to cancel the A2A task (R-PER-5); the operator only
 * reports, the caller decides.
 */
import { Observable, type MonoTypeOperatorFunction } from "rxjs";

export function onAbandon<T>(abandoned: () => void): MonoTypeOperatorFunction<T> {
  return (source) =>
    new Observable<T>((subscriber) => {
      let ended = false;
      const subscription = source.subscribe({
        next: (item) => subscriber.next(item),
        error: (error: unknown) => {
          ended = true;
          subscriber.error(error);
        },
        complete: () => {
          ended = true;
          subscriber.complete();
        },
      });
      return () => {
        subscription.unsubscribe();
        if (!ended) abandoned();
      };
    });
}
