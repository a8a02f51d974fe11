/**
 * A failure upstream → the run's `RUN_ERROR`, so the client always learns
 * how its run ended; unless the run has told its end already, in which
 * case the stream just ends (a second terminal event would break the
 * client's verifier). Whatever the failure, it never reaches the sink as an
 * error: a run's failure stays in that run.
 *
 * A failure before anything passed is told after `opening` (RUN_STARTED):
 * a client's verifier accepts no event before it.
 *
 *   -a-#        → -a-(E|)
 *   -a-F-#      → -a-F-|      (F: RUN_FINISHED or RUN_ERROR)
 *   -#          → -(SE|)      (S: opening)
 */
import { EventType } from "@ag-ui/core";
import type { MonoTypeOperatorFunction } from "rxjs";
import { operate, operatorOf } from "../lib/rx/operate.js";

/**
 * Items other than events (the sink's heartbeat) pass too; only events can end a run. The type is read, not
 * tested with `in`: this runs twice on every item, of many shapes, where a read costs about half as much.
 */
const isTerminal = (item: unknown) => {
  if (typeof item !== "object" || item === null) return false;
  const { type } = item as { type?: unknown };
  return type === EventType.RUN_FINISHED || type === EventType.RUN_ERROR;
};

/** One subscriber rather than `tap` and `catchError`: it sits twice on every event of every run. */
export function endWithRunError<T>(runError: (error: unknown) => T, opening: readonly T[] = []): MonoTypeOperatorFunction<T> {
  return operatorOf<T, T>((destination) => {
    let started = false;
    let ended = false;
    return operate<T, T>({
      destination,
      next: (item) => {
        started = true;
        if (!ended && isTerminal(item)) ended = true;
        destination.next(item);
      },
      error: (error: unknown) => {
        if (!ended) {
          if (!started) for (const item of opening) destination.next(item);
          destination.next(runError(error));
        }
        destination.complete();
      },
    });
  });
}
