/**
 * Shows each interrupt as a frontend tool call as well (R-SIB-4), for a
 * generic AG-UI client that knows tool calls but not interrupts: right
 * before `RUN_FINISHED {outcome: interrupt}`, a `TOOL_CALL_START` named
 * `iac-code.interrupt.<kind>` whose id is the interrupt id, its arguments
 * (message, response schema, metadata) and its `TOOL_CALL_END`. The resumed
 * run closes it with a `TOOL_CALL_RESULT` carrying the answer, so it never
 * dangles. Opt-in per request (`forwardedProps.iacCodeDisplay`).
 *
 * Like every tool call, the interrupt's goes in the assistant message of
 * its turn: the message the run's last text or tool call went to, unless a
 * tool result ended that turn since; else a message named after the first
 * interrupt (`lib/model/message-ids.ts`).
 *
 *   TEXT_START(m) … RUN_FINISHED{interrupt [i1]}
 *     → TEXT_START(m) … START(i1, parent m) ARGS(i1) END(i1) RUN_FINISHED{interrupt [i1]}
 */
import { EventType, type AGUIEvent, type Interrupt } from "@ag-ui/core";
import { defer, type OperatorFunction } from "rxjs";
import { emitEach } from "./emit-each.js";
import { canonicalJson } from "../lib/model/json.js";
import { toolTurnMessageId } from "../lib/model/message-ids.js";

export const INTERRUPT_TOOL_PREFIX = "iac-code.interrupt.";

/** `iac-code.interrupt.permission`, `iac-code.interrupt.ask_user_question`, … */
export function interruptToolName(interrupt: Interrupt): string {
  const kind = (interrupt.metadata as { kind?: unknown } | undefined)?.kind;
  const name = typeof kind === "string" && /^[A-Za-z0-9_.-]+$/.test(kind) ? kind : "input";
  return INTERRUPT_TOOL_PREFIX + name;
}

function asToolCall(interrupt: Interrupt, parentMessageId: string): AGUIEvent[] {
  const { id, message, responseSchema, metadata } = interrupt;
  return [
    { type: EventType.TOOL_CALL_START, toolCallId: id, toolCallName: interruptToolName(interrupt), parentMessageId },
    { type: EventType.TOOL_CALL_ARGS, toolCallId: id, delta: canonicalJson({ message, responseSchema, metadata }) },
    { type: EventType.TOOL_CALL_END, toolCallId: id },
  ];
}

/** `runId`: the run whose messages these are (for an observer, the run it watches). */
export function interruptsAsTools(options: { runId: string }): OperatorFunction<AGUIEvent, AGUIEvent> {
  return (source) =>
    defer(() => {
      let turnId: string | undefined;
      return source.pipe(
        emitEach((event): AGUIEvent | AGUIEvent[] => {
          switch (event.type) {
            case EventType.TEXT_MESSAGE_START:
              turnId = event.messageId;
              return event;
            case EventType.TOOL_CALL_START:
              turnId = event.parentMessageId ?? turnId;
              return event;
            case EventType.TOOL_CALL_RESULT:
              turnId = undefined;
              return event;
            case EventType.RUN_FINISHED: {
              if (event.outcome?.type !== "interrupt") return event;
              const { interrupts } = event.outcome;
              const parent = turnId ?? toolTurnMessageId(options.runId, interrupts[0]!.id);
              return [...interrupts.flatMap((interrupt) => asToolCall(interrupt, parent)), event];
            }
            default:
              return event;
          }
        }),
      );
    });
}
