import { expect } from "@jest/globals";
import { mergeMap, Observable, of, pipe, type OperatorFunction } from "rxjs";
import { TestScheduler } from "rxjs/testing";

/** A TestScheduler whose frames are compared with Jest's deep equality. */
export const marbles = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

/**
 * The operator between two identity `mergeMap`s, as RxJS's own specs put it
 * for "should not break unsubscription chain when unsubscribed explicitly":
 * a subscriber that leaves from outside must be felt at the source, through
 * the operator's own subscription.
 */
export const inChain = <T, R>(operator: OperatorFunction<T, R>): OperatorFunction<T, R> =>
  pipe(
    mergeMap((item: T) => of(item)),
    operator,
    mergeMap((item: R) => of(item)),
  );

/**
 * A synchronous source, as RxJS's specs write one: inside `subscribe` it
 * sends `items` one after the other for as long as its subscriber is open,
 * then completes (unless `complete` is false), and records in `sent` what it
 * sent. An operator whose subscriber leaves half-way must close the
 * subscription the source sees, or the source sends everything.
 */
export function synchronousSource<T>(items: readonly T[], { complete = true } = {}): { source: Observable<T>; sent: T[] } {
  const sent: T[] = [];
  const source = new Observable<T>((subscriber) => {
    for (const item of items) {
      if (subscriber.closed) return;
      sent.push(item);
      subscriber.next(item);
    }
    if (complete) subscriber.complete();
  });
  return { source, sent };
}
