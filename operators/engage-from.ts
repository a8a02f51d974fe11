/**
 * Puts `operator` in the stream only from the first item it must see: until
 * `engages(item)`, items pass around it untouched; that item and everything
 * after it, the end included, go through `operator`, subscribed then. A run
 * that never needs the stages (a chat run meets no pipeline envelope) thus
 * pays nothing per item for them, while one that turns out to need them
 * mid-run still gets them from the first item that matters.
 *
 * Only for an `operator` that, before its first engaging item, would have
 * passed every item unchanged and emitted nothing of its own (no
 * `startWith`): skipping it then changes nothing. It must also answer each
 * item synchronously, or an item passed around it could overtake one still
 * inside it.
 *
 *   engages: x   a b x c |  →  a b X C |   (operator: uppercase)
 *
 * An `operator` made of `emitEach` stages alone (as the run's projectors
 * are) becomes a gate among the `emitEach` stages around it: they all run
 * in one subscriber, where a subscriber for this stage, one for the
 * operator's stages and one for the stages after it made each item pay
 * three hops (`operators/emit-each.ts`).
 */
import { Observable, type MonoTypeOperatorFunction, type Subscriber } from "rxjs";
import { operate, operatorOf } from "../lib/rx/operate.js";
import { gatedStages } from "./emit-each.js";

export function engageFrom<T>(engages: (item: T) => boolean, operator: MonoTypeOperatorFunction<T>): MonoTypeOperatorFunction<T> {
  return gatedStages(engages, operator) ?? operatorOf((destination: Subscriber<T>) => engagingFrom(destination, engages, operator));
}

/**
 * Outside `engageFrom`'s `(source) => …`: the handlers live as long as the
 * run's stream, and keep only what they use, not the stages upstream.
 */
function engagingFrom<T>(destination: Subscriber<T>, engages: (item: T) => boolean, operator: MonoTypeOperatorFunction<T>): Subscriber<T> {
  /** What feeds `operator`, once engaged; per subscription, so a second subscription starts disengaged. */
  let engaged: Subscriber<T> | undefined;
  return operate<T, T>({
    destination,
    next: (item) => {
      if (engaged === undefined) {
        if (!engages(item)) {
          destination.next(item);
          return;
        }
        // The operator's own source is this subscriber's tail, fed directly (a Subject would add a loop per item).
        // Chained to `destination`: the operator's subscribers leave with it.
        operator(new Observable<T>((tail) => void (engaged = tail))).subscribe(destination);
      }
      engaged!.next(item);
    },
    error: (error: unknown) => (engaged ? engaged.error(error) : destination.error(error)),
    complete: () => (engaged ? engaged.complete() : destination.complete()),
  });
}
