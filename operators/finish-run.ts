/**
 * The `run-end` signal → `RUN_FINISHED` (outcome `success`, or `interrupt`
 * with the committed interrupts) or `RUN_ERROR {code, message}`, with the
 * run's usage. This is the last stage that sees
 * kernel signals: whatever no projector claimed (task ids, states) stops
 * here, so what leaves is AG-UI events only.
 */
import { EventType, type AGUIEvent } from "@ag-ui/core";
import { type OperatorFunction } from "rxjs";
import { emitEach } from "./emit-each.js";
import type { AguiError } from "../lib/errors.js";
import { isSignal, type RunItem } from "../lib/model/kernel-signal.js";

export interface FinishRunOptions {
  threadId: string;
  runId: string;
  /** The error's message in the request's language. */
  describe: (error: AguiError) => string;
}

/**
 * The `result` of a run whose interrupt the user cancelled, with outcome
 * `success`. AG-UI 1.0 has `outcome: {type: "cancelled"}`, but a 0.0.x client
 * rejects it and keeps its pending interrupts, and CopilotKit 1.75 is one
 * even behind a 1.0 HttpAgent (its runtime and client core are on 0.0.59),
 * so no request can tell the service it may send it. Any RUN_FINISHED clears
 * a client's pending interrupts; this says why the run ended.
 */
export const CANCELLED_RESULT = { cancelled: true } as const;

export const runErrorEvent = (error: AguiError, describe: FinishRunOptions["describe"]): AGUIEvent => ({
  type: EventType.RUN_ERROR,
  code: error.code,
  message: describe(error),
});

export function finishRun({ threadId, runId, describe }: FinishRunOptions): OperatorFunction<RunItem, AGUIEvent> {
  return emitEach((item): AGUIEvent[] => {
    if (!isSignal(item)) return [item];
    if (item.kind !== "run-end") return [];
    const usage = item.usage ? { usage: item.usage } : {};
    if (item.error) return [{ ...runErrorEvent(item.error, describe), ...usage }];
    if (item.cancelled)
      return [{ type: EventType.RUN_FINISHED, threadId, runId, outcome: { type: "success" }, result: CANCELLED_RESULT, ...usage }];
    const outcome = item.interrupts?.length ? { type: "interrupt" as const, interrupts: item.interrupts } : { type: "success" as const };
    return [{ type: EventType.RUN_FINISHED, threadId, runId, outcome, ...usage }];
  });
}
