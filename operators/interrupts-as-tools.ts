/**
 * Shows each interrupt as a frontend tool call as well (R-SIB-4), for a
 * generic AG-UI client that knows tool calls but not interrupts: right
 * before `RUN_FINISHED {outcome: interrupt}`, a `TOOL_CALL_START` named
 * `iac-code.interrupt.<kind>` whose id is the interrupt id, its arguments
 * (message, response schema, metadata) and its `TOOL_CALL_END`. The resumed
 * run closes it with a `TOOL_CALL_RESULT` carrying the answer, so it never
 * dangles. Opt-in per request (`forwardedProps.iacCodeDisplay`).
 *
 *   RUN_FINISHED{interrupt [i1]} → START(i1) ARGS(i1) END(i1) RUN_FINISHED{interrupt [i1]}
 */
import { EventType, type AGUIEvent, type Interrupt } from "@ag-ui/core";
import { type OperatorFunction } from "rxjs";
import { emitEach } from "./emit-each.js";
import { canonicalJson } from "../lib/model/json.js";

export const INTERRUPT_TOOL_PREFIX = "iac-code.interrupt.";

/** `iac-code.interrupt.permission`, `iac-code.interrupt.ask_user_question`, … */
export function interruptToolName(interrupt: Interrupt): string {
  const kind = (interrupt.metadata as { kind?: unknown } | undefined)?.kind;
  const name = typeof kind === "string" && /^[A-Za-z0-9_.-]+$/.test(kind) ? kind : "input";
  return INTERRUPT_TOOL_PREFIX + name;
}

function asToolCall(interrupt: Interrupt): AGUIEvent[] {
  const { id, message, responseSchema, metadata } = interrupt;
  return [
    { type: EventType.TOOL_CALL_START, toolCallId: id, toolCallName: interruptToolName(interrupt) },
    { type: EventType.TOOL_CALL_ARGS, toolCallId: id, delta: canonicalJson({ message, responseSchema, metadata }) },
    { type: EventType.TOOL_CALL_END, toolCallId: id },
  ];
}

export function interruptsAsTools(): OperatorFunction<AGUIEvent, AGUIEvent> {
  return emitEach((event) =>
    event.type === EventType.RUN_FINISHED && event.outcome?.type === "interrupt"
      ? [...event.outcome.interrupts.flatMap(asToolCall), event]
      : [event],
  );
}
