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
import { catchError, defer, EMPTY, of, tap, type MonoTypeOperatorFunction, type ObservableInput } from "rxjs";

/** Items other than events (the sink's heartbeat) pass too; only events can end a run. */
const isTerminal = (item: unknown) =>
  typeof item === "object" &&
  item !== null &&
  "type" in item &&
  (item.type === EventType.RUN_FINISHED || item.type === EventType.RUN_ERROR);

export function endWithRunError<T>(runError: (error: unknown) => T, opening: readonly T[] = []): MonoTypeOperatorFunction<T> {
  return (source) =>
    defer(() => {
      let started = false;
      let ended = false;
      return source.pipe(
        tap((item) => {
          started = true;
          if (isTerminal(item)) ended = true;
        }),
        catchError((error: unknown): ObservableInput<T> => {
          if (ended) return EMPTY;
          return started ? of(runError(error)) : of(...opening, runError(error));
        }),
      );
    });
}
