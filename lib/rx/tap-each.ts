/**
 * `tap(next)` as one `operate` subscriber: calls `next` with each item, then
 * passes the item on; ends and errors pass as they are. RxJS's `tap` builds
 * a lifted Observable, a subscriber with a wrapper closure per handler, and
 * a closure per observer method it may call, about 1 KiB that every open
 * stream holds for as long as it lasts. A throw from `next` errors the
 * stream, as with `tap`.
 */
import { Observable, type MonoTypeOperatorFunction, type Subscriber } from "rxjs";
import { operate } from "./operate.js";

export function tapEach<T>(next: (item: T) => void): MonoTypeOperatorFunction<T> {
  return (source) =>
    new Observable<T>((destination) => {
      source.subscribe(eachTo(destination, next));
    });
}

/** Outside the operator, so the subscriber's handler keeps `next` and `destination`, and not the source. */
function eachTo<T>(destination: Subscriber<T>, next: (item: T) => void): Subscriber<T> {
  return operate<T, T>({
    destination,
    next: (item) => {
      next(item);
      destination.next(item);
    },
  });
}
