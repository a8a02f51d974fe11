/**
 * Calls `abandoned` when the subscriber leaves before the source has ended
 * (a client that disconnects mid-run), and never after a normal end or an
 * error. The run uses it to cancel the A2A task (R-PER-5); the operator only
 * reports, the caller decides.
 */
import { Observable, type MonoTypeOperatorFunction } from "rxjs";
import { operate } from "../lib/rx/operate.js";

export function onAbandon<T>(abandoned: () => void): MonoTypeOperatorFunction<T> {
  return (source) =>
    new Observable<T>((destination) => {
      let ended = false;
      source.subscribe(
        operate({
          destination,
          error: (error: unknown) => {
            ended = true;
            destination.error(error);
          },
          complete: () => {
            ended = true;
            destination.complete();
          },
          // After the source was left, so the caller's reaction (cancel the task) comes after the stream closed.
          finalize: () => {
            if (!ended) abandoned();
          },
        }),
      );
    });
}
