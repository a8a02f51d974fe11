/**
 * Keeps every span balanced: tracks what is open in the AG-UI stream and,
 * right before `RUN_FINISHED` or `RUN_ERROR`, closes what is left, in the
 * contract's order (§6 `close_all`): reasoning, tool calls, text messages,
 * steps — each group sorted by id. After the terminal event nothing else
 * passes, so no span can open again. A stream that completes with no
 * terminal event is left as it is: every run pipeline ends with one.
 *
 *   TEXT_START(m) TOOL_START(t) RUN_FINISHED → TEXT_START(m) TOOL_START(t) TOOL_END(t) TEXT_END(m) RUN_FINISHED
 */
import { EventType, type AGUIEvent } from "@ag-ui/core";
import { defer, takeWhile, type OperatorFunction } from "rxjs";
import { emitEach } from "./emit-each.js";

const sorted = (ids: Set<string>) => [...ids].sort();

export const isTerminal = (event: AGUIEvent) => event.type === EventType.RUN_FINISHED || event.type === EventType.RUN_ERROR;

export function closeSpans(): OperatorFunction<AGUIEvent, AGUIEvent> {
  return (source) =>
    defer(() => {
      const reasoning = new Set<string>();
      const reasoningMessages = new Set<string>();
      const tools = new Set<string>();
      const messages = new Set<string>();
      const steps = new Set<string>();

      const track = (event: AGUIEvent) => {
        switch (event.type) {
          case EventType.REASONING_START:
            reasoning.add(event.messageId);
            break;
          case EventType.REASONING_END:
            reasoning.delete(event.messageId);
            break;
          case EventType.REASONING_MESSAGE_START:
            reasoningMessages.add(event.messageId);
            break;
          case EventType.REASONING_MESSAGE_END:
            reasoningMessages.delete(event.messageId);
            break;
          case EventType.TOOL_CALL_START:
            tools.add(event.toolCallId);
            break;
          case EventType.TOOL_CALL_END:
            tools.delete(event.toolCallId);
            break;
          case EventType.TEXT_MESSAGE_START:
            messages.add(event.messageId);
            break;
          case EventType.TEXT_MESSAGE_END:
            messages.delete(event.messageId);
            break;
          case EventType.STEP_STARTED:
            steps.add(event.stepName);
            break;
          case EventType.STEP_FINISHED:
            steps.delete(event.stepName);
            break;
          default:
            break;
        }
      };

      const closeAll = (): AGUIEvent[] => {
        const out: AGUIEvent[] = [
          ...sorted(reasoningMessages).map((messageId): AGUIEvent => ({ type: EventType.REASONING_MESSAGE_END, messageId })),
          ...sorted(reasoning).map((messageId): AGUIEvent => ({ type: EventType.REASONING_END, messageId })),
          ...sorted(tools).map((toolCallId): AGUIEvent => ({ type: EventType.TOOL_CALL_END, toolCallId })),
          ...sorted(messages).map((messageId): AGUIEvent => ({ type: EventType.TEXT_MESSAGE_END, messageId })),
          ...sorted(steps).map((stepName): AGUIEvent => ({ type: EventType.STEP_FINISHED, stepName })),
        ];
        for (const open of [reasoningMessages, reasoning, tools, messages, steps]) open.clear();
        return out;
      };

      return source.pipe(
        takeWhile((event) => !isTerminal(event), true),
        emitEach((event) => {
          if (isTerminal(event)) return [...closeAll(), event];
          track(event);
          return [event];
        }),
      );
    });
}
