/**
 * `tap(next)` as one `operate` subscriber: calls `next` with each item, then
 * passes the item on; ends and errors pass as they are. RxJS's `tap` builds
 * a lifted Observable, a subscriber with a wrapper closure per handler, and
 * a closure per observer method it may call, about 1 KiB that every open
 * stream holds for as long as it lasts. A throw from `next` errors the
 * stream, as with `tap`.
 */
import type { MonoTypeOperatorFunction } from "rxjs";
import { operate, operatorOf } from "./operate.js";

export function tapEach<T>(next: (item: T) => void): MonoTypeOperatorFunction<T> {
  return operatorOf<T, T>((destination) =>
    operate({
      destination,
      next: (item) => {
        next(item);
        destination.next(item);
      },
    }),
  );
}
