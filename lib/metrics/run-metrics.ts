/**
 * A run's stream as `/metrics` counts it: started, its time to first event,
 * and how it ended. One subscriber between the run and its sink, which
 * looks at each event's type and nothing else.
 */
import { EventType } from "@ag-ui/core";
import { Observable, type MonoTypeOperatorFunction } from "rxjs";
import { CANCELLED_RESULT } from "../../operators/finish-run.js";
import { HEARTBEAT } from "../../operators/merge-heartbeat.js";
import { isJsonObject } from "../model/json.js";
import { operate } from "../rx/operate.js";
import type { SseItem } from "../run-pipeline.js";
import { isGuidanceRun } from "../threads/guidance.js";
import type { ValidRunInput } from "../model/run-input.js";
import { codeLabel, secondsSince, type RunKind, type RunOutcome, type ServiceMetrics } from "./service-metrics.js";

/**
 * Counts the run once subscribed (it is admitted by then), times its first
 * item from `requestStartedAt` (a `performance.now()` reading), and on
 * teardown counts its end: the outcome of its RUN_FINISHED, its RUN_ERROR's
 * code, or `abandoned` when its client left before either.
 */
export function countRun(metrics: ServiceMetrics, kind: RunKind, requestStartedAt: number): MonoTypeOperatorFunction<SseItem> {
  // One subscriber (`operate`), not defer, tap and finalize: it sits on every open stream for as long as it lasts.
  // A subscriber that leaves during a synchronous burst still stops the run at once.
  return (run$) =>
    new Observable<SseItem>((destination) => {
      metrics.runsStarted.inc({ kind });
      let first = true;
      let outcome: RunOutcome = "abandoned";
      let code: string | undefined;
      run$.subscribe(
        operate({
          destination,
          next: (item) => {
            if (first) {
              first = false;
              metrics.timeToFirstEvent.observe(secondsSince(requestStartedAt));
            }
            if (item !== HEARTBEAT) {
              if (item.type === EventType.RUN_FINISHED) outcome = finishedOutcome(item.outcome?.type, item.result);
              else if (item.type === EventType.RUN_ERROR) {
                outcome = "error";
                code = item.code;
              }
            }
            destination.next(item);
          },
          finalize: () => metrics.runsEnded.inc({ kind, outcome, code: outcome === "error" ? codeLabel(code) : "" }),
        }),
      );
    });
}

/** What a run request asks for, as a label. */
export const runKindOf = (input: ValidRunInput): RunKind =>
  isGuidanceRun(input) ? "guidance" : input.resume === undefined ? "new" : "resume";

/** RUN_FINISHED's outcome as a label; a user's cancel of an interrupt finishes with `CANCELLED_RESULT` (see `finish-run.ts`). */
const finishedOutcome = (type: string | undefined, result: unknown): RunOutcome =>
  type === "interrupt" || type === "cancelled"
    ? type
    : isJsonObject(result) && result.cancelled === CANCELLED_RESULT.cancelled
      ? "cancelled"
      : "success";
