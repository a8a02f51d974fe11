/**
 * A decorator that times every method of an object, for the kernel client
 * and the thread store alike: a Proxy, so it stands wherever the object
 * does (`A2AClient` is nominal, its URL and token in `#private` fields),
 * and methods someone adds later are timed with no change here. A method
 * that answers a promise is timed until it settles; one that answers an
 * Observable, from its subscription until its first item (or its end, or
 * its error); anything else is passed through untimed.
 */
import { isObservable, Observable, type Subscriber } from "rxjs";
import { operate } from "../rx/operate.js";
import { wrapMethods } from "../wrap-methods.js";
import { secondsSince } from "./service-metrics.js";

export type Outcome = "ok" | "error";
/** Told once per timed call: the method's name (a member name, so a closed set), how it went, and how long it took. */
export type TimingSink = (method: string, outcome: Outcome, seconds: number, answer: unknown) => void;

export function timedMembers<T extends object>(target: T, record: TimingSink): T {
  return wrapMethods(target, (property, call) => (...args: unknown[]) => {
    const startedAt = performance.now();
    const answer = call(...args);
    if (answer instanceof Promise) {
      answer.then(
        (settled: unknown) => record(property, "ok", secondsSince(startedAt), settled),
        (error: unknown) => record(property, "error", secondsSince(startedAt), error),
      );
      return answer;
    }
    if (isObservable(answer)) return untilFirstItem(answer, property, record);
    return answer;
  });
}

/** The stream as it was, timed from each subscription to its first item, end or error: one check per item after that. */
function untilFirstItem<V>(source: Observable<V>, method: string, record: TimingSink): Observable<V> {
  // One subscriber (`operate`), not defer and tap: a run's kernel stream keeps it for as long as the run is open.
  return new Observable<V>((destination) => void source.subscribe(timingUntilFirstItem(destination, method, record)));
}

/**
 * Outside `untilFirstItem`, whose scope holds `source` (the kernel call's
 * Observables): the handlers live as long as the run's stream, and keep
 * only what they use. A subscriber that leaves during a synchronous burst
 * still stops the stream at once.
 */
function timingUntilFirstItem<V>(destination: Subscriber<V>, method: string, record: TimingSink): Subscriber<V> {
  const startedAt = performance.now();
  let timing = true;
  const done = (outcome: Outcome, answer: unknown) => {
    if (!timing) return;
    timing = false;
    record(method, outcome, secondsSince(startedAt), answer);
  };
  return operate<V>({
    destination,
    next: (item) => {
      if (timing) done("ok", item);
      destination.next(item);
    },
    error: (error: unknown) => {
      done("error", error);
      destination.error(error);
    },
    complete: () => {
      done("ok", undefined);
      destination.complete();
    },
  });
}
