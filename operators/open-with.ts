/**
 * `startWith` without a stage per item: emits `opening`, then subscribes
 * the subscriber downstream to the source itself, so every item after the
 * opening reaches it directly. RxJS's `startWith` is a `concat`, whose
 * inner subscription costs each item of the run two more calls.
 *
 *   opening [s]:  -a-b|  →  s-a-b|
 */
import { Observable, type MonoTypeOperatorFunction } from "rxjs";

export function openWith<T>(opening: readonly T[]): MonoTypeOperatorFunction<T> {
  return (source) =>
    new Observable<T>((destination) => {
      for (const item of opening) {
        // A subscriber that left on the opening (take(1)) never reaches the source.
        if (destination.closed) return;
        destination.next(item);
      }
      if (destination.closed) return;
      // The source's teardown is the subscriber's own: it goes when the subscriber leaves.
      source.subscribe(destination);
    });
}
