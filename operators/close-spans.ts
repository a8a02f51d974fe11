/**
 * Keeps every span balanced: tracks what is open in the AG-UI stream and,
 * right before `RUN_FINISHED` or `RUN_ERROR`, closes what is left, in the
 * contract's order (§6 `close_all`): reasoning, tool calls, text messages,
 * steps — each group sorted by id. After the terminal event nothing else
 * passes, so no span can open again. A stream that completes with no
 * terminal event is left as it is: every run pipeline ends with one.
 *
 *   TEXT_START(m) TOOL_START(t) RUN_FINISHED → TEXT_START(m) TOOL_START(t) TOOL_END(t) TEXT_END(m) RUN_FINISHED
 *
 * A pipeline step it closes keeps its facts, with the outcome `run-ended`.
 */
import { EventType, type AGUIEvent } from "@ag-ui/core";
import { defer, Observable, type OperatorFunction, type Subscriber } from "rxjs";
import { operate } from "../lib/rx/operate.js";
import { stepFactsFrom, stepMetadata, type StepFacts } from "../lib/model/step-facts.js";

const sorted = (ids: Set<string>) => [...ids].sort();

/** The step is not over, only its span in this run: `run-ended`, so a view does not draw it done (docs/pipeline-feed.md). */
function closedWithRun(stepName: string, facts: StepFacts | undefined): AGUIEvent {
  if (facts === undefined) return { type: EventType.STEP_FINISHED, stepName };
  const { reopened: _reopened, sequence: _sequence, ...step } = facts;
  return { type: EventType.STEP_FINISHED, stepName, metadata: stepMetadata({ ...step, outcome: "run-ended" }) };
}

export const isTerminal = (event: AGUIEvent) => event.type === EventType.RUN_FINISHED || event.type === EventType.RUN_ERROR;

export function closeSpans(): OperatorFunction<AGUIEvent, AGUIEvent> {
  return (source) =>
    defer(() => {
      const reasoning = new Set<string>();
      const reasoningMessages = new Set<string>();
      const tools = new Set<string>();
      const messages = new Set<string>();
      /** Step name → the facts its STEP_STARTED carried, for the STEP_FINISHED that closes it with the run. */
      const steps = new Map<string, StepFacts | undefined>();

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
            steps.set(event.stepName, stepFactsFrom(event));
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
          ...[...steps.keys()].sort().map((stepName): AGUIEvent => closedWithRun(stepName, steps.get(stepName))),
        ];
        for (const open of [reasoningMessages, reasoning, tools, messages, steps]) open.clear();
        return out;
      };

      // One subscriber, not `takeWhile` before an `emitEach`: this stage sees every event of every run.
      return new Observable<AGUIEvent>((destination) => {
        const upstream: Subscriber<AGUIEvent> = operate<AGUIEvent, AGUIEvent>({
          destination,
          next: (event) => {
            if (!isTerminal(event)) {
              track(event);
              destination.next(event);
              return;
            }
            for (const closing of closeAll()) destination.next(closing);
            destination.next(event);
            // Nothing after the terminal event: the source is left, as `takeWhile` would.
            destination.complete();
            upstream.unsubscribe();
          },
        });
        source.subscribe(upstream);
      });
    });
}
