/**
 * The `run-end` signal → `RUN_FINISHED` (outcome `success`, `interrupt`
 * with the committed interrupts, or `cancelled` when the user cancelled what
 * the run waited on) or `RUN_ERROR {code, message}`, with the
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
    const outcome = item.cancelled
      ? { type: "cancelled" as const }
      : item.interrupts?.length
        ? { type: "interrupt" as const, interrupts: item.interrupts }
        : { type: "success" as const };
    return [{ type: EventType.RUN_FINISHED, threadId, runId, outcome, ...usage }];
  });
}
