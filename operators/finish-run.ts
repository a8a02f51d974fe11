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
  /** The error's message in the request's language, with any detail beside it. */
  describe: ErrorDescriber;
}

/** The message of a RUN_ERROR and, when there is one, its detail. */
export type ErrorDescriber = (error: AguiError) => string | { message: string; detail?: string };

/**
 * The `result` of a run whose interrupt the user cancelled, with outcome
 * `success`. AG-UI 1.0 has `outcome: {type: "cancelled"}`, but a 0.0.x client
 * rejects it and keeps its pending interrupts, and CopilotKit 1.75 is one
 * even behind a 1.0 HttpAgent (its runtime and client core are on 0.0.59),
 * so no request can tell the service it may send it. Any RUN_FINISHED clears
 * a client's pending interrupts; this says why the run ended.
 */
export const CANCELLED_RESULT = { cancelled: true } as const;

/**
 * The detail rides in `metadata`, the one open field of RUN_ERROR: @ag-ui/client
 * 1.0 strips a top-level key it does not know before anything sees it.
 */
export const runErrorEvent = (error: AguiError, describe: ErrorDescriber): AGUIEvent => {
  const text = describe(error);
  const { message, detail } = typeof text === "string" ? { message: text, detail: undefined } : text;
  const metadata = detail === undefined ? {} : { metadata: { "iac-code": { detail } } };
  return { type: EventType.RUN_ERROR, code: error.code, message, ...metadata };
};

export function finishRun({ threadId, runId, describe }: FinishRunOptions): OperatorFunction<RunItem, AGUIEvent> {
  return emitEach((item): AGUIEvent | AGUIEvent[] => {
    if (!isSignal(item)) return item;
    if (item.kind !== "run-end") return [];
    const usage = item.usage ? { usage: item.usage } : {};
    if (item.error) return [{ ...runErrorEvent(item.error, describe), ...usage }];
    if (item.cancelled)
      return [{ type: EventType.RUN_FINISHED, threadId, runId, outcome: { type: "success" }, result: CANCELLED_RESULT, ...usage }];
    const outcome = item.interrupts?.length ? { type: "interrupt" as const, interrupts: item.interrupts } : { type: "success" as const };
    return [{ type: EventType.RUN_FINISHED, threadId, runId, outcome, ...usage }];
  });
}
