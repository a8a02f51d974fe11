/**
 * A run's stream as `/metrics` counts it: started, its time to first event,
 * and how it ended. One subscriber between the run and its sink, which
 * looks at each event's type and nothing else.
 */
import { EventType } from "@ag-ui/core";
import type { MonoTypeOperatorFunction, Subscriber } from "rxjs";
import { CANCELLED_RESULT } from "../../operators/finish-run.js";
import { HEARTBEAT } from "../../operators/merge-heartbeat.js";
import { isJsonObject } from "../model/json.js";
import { OperatorSubscriber, operatorOf } from "../rx/operate.js";
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
  // One subscriber, not defer, tap and finalize: it sits on every open stream for as long as it lasts.
  return operatorOf((destination: Subscriber<SseItem>) => {
    metrics.runsStarted.inc({ kind });
    return new RunCounter(destination, metrics, kind, requestStartedAt);
  });
}

/**
 * The run's outcome, noted as its events pass and counted once it ends. A
 * class, with no closures, and made apart from the run's Observable: each
 * open stream keeps it for as long as it lasts. A subscriber that leaves
 * during a synchronous burst still stops the run at once.
 */
class RunCounter extends OperatorSubscriber<SseItem, SseItem> {
  #first = true;
  #outcome: RunOutcome = "abandoned";
  #code: string | undefined;

  constructor(
    destination: Subscriber<SseItem>,
    private readonly metrics: ServiceMetrics,
    private readonly kind: RunKind,
    private readonly requestStartedAt: number,
  ) {
    super({ destination });
  }

  protected override _next(item: SseItem): void {
    try {
      if (this.#first) {
        this.#first = false;
        this.metrics.timeToFirstEvent.observe(secondsSince(this.requestStartedAt));
      }
      if (item !== HEARTBEAT) {
        if (item.type === EventType.RUN_FINISHED) this.#outcome = finishedOutcome(item.outcome?.type, item.result);
        else if (item.type === EventType.RUN_ERROR) {
          this.#outcome = "error";
          this.#code = item.code;
        }
      }
      this.downstream.next(item);
    } catch (thrown) {
      this.downstream.error(thrown);
    }
  }

  override unsubscribe(): void {
    if (this.closed) return;
    super.unsubscribe();
    const outcome = this.#outcome;
    this.metrics.runsEnded.inc({ kind: this.kind, outcome, code: outcome === "error" ? codeLabel(this.#code) : "" });
  }
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
