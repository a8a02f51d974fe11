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
import type { OperatorFunction, Subscriber } from "rxjs";
import { OperatorSubscriber, operatorOf } from "../lib/rx/operate.js";
import { stepFactsFrom, stepMetadata, type StepFacts } from "../lib/model/step-facts.js";

const sorted = (ids: Set<string> | undefined): string[] => (ids ? [...ids].sort() : []);

/** The step is not over, only its span in this run: `run-ended`, so a view does not draw it done (docs/pipeline-feed.md). */
function closedWithRun(stepName: string, facts: StepFacts | undefined): AGUIEvent {
  if (facts === undefined) return { type: EventType.STEP_FINISHED, stepName };
  const { reopened: _reopened, sequence: _sequence, ...step } = facts;
  return { type: EventType.STEP_FINISHED, stepName, metadata: stepMetadata({ ...step, outcome: "run-ended" }) };
}

export const isTerminal = (event: AGUIEvent) => event.type === EventType.RUN_FINISHED || event.type === EventType.RUN_ERROR;

export function closeSpans(): OperatorFunction<AGUIEvent, AGUIEvent> {
  return operatorOf((destination: Subscriber<AGUIEvent>) => new CloseSpansSubscriber(destination));
}

/**
 * What is open, kept by the stage's one subscriber, with no closures: this
 * stage sees every event of every run, and an open stream keeps it for as
 * long as it lasts. Each kind's set is made at its first span: most runs
 * open text messages only.
 */
class CloseSpansSubscriber extends OperatorSubscriber<AGUIEvent, AGUIEvent> {
  #reasoning: Set<string> | undefined;
  #reasoningMessages: Set<string> | undefined;
  #tools: Set<string> | undefined;
  #messages: Set<string> | undefined;
  /** Step name → the facts its STEP_STARTED carried, for the STEP_FINISHED that closes it with the run. */
  #steps: Map<string, StepFacts | undefined> | undefined;

  constructor(destination: Subscriber<AGUIEvent>) {
    super({ destination });
  }

  // One subscriber, not `takeWhile` before an `emitEach`.
  protected override _next(event: AGUIEvent): void {
    const destination = this.downstream;
    try {
      if (!isTerminal(event)) {
        this.#track(event);
        destination.next(event);
        return;
      }
      for (const closing of this.#closeAll()) destination.next(closing);
      destination.next(event);
      // Nothing after the terminal event: the source is left, as `takeWhile` would.
      destination.complete();
      this.unsubscribe();
    } catch (thrown) {
      destination.error(thrown);
    }
  }

  #track(event: AGUIEvent): void {
    switch (event.type) {
      case EventType.REASONING_START:
        (this.#reasoning ??= new Set()).add(event.messageId);
        break;
      case EventType.REASONING_END:
        this.#reasoning?.delete(event.messageId);
        break;
      case EventType.REASONING_MESSAGE_START:
        (this.#reasoningMessages ??= new Set()).add(event.messageId);
        break;
      case EventType.REASONING_MESSAGE_END:
        this.#reasoningMessages?.delete(event.messageId);
        break;
      case EventType.TOOL_CALL_START:
        (this.#tools ??= new Set()).add(event.toolCallId);
        break;
      case EventType.TOOL_CALL_END:
        this.#tools?.delete(event.toolCallId);
        break;
      case EventType.TEXT_MESSAGE_START:
        (this.#messages ??= new Set()).add(event.messageId);
        break;
      case EventType.TEXT_MESSAGE_END:
        this.#messages?.delete(event.messageId);
        break;
      case EventType.STEP_STARTED:
        (this.#steps ??= new Map()).set(event.stepName, stepFactsFrom(event));
        break;
      case EventType.STEP_FINISHED:
        this.#steps?.delete(event.stepName);
        break;
      default:
        break;
    }
  }

  #closeAll(): AGUIEvent[] {
    const steps = this.#steps;
    const out: AGUIEvent[] = [
      ...sorted(this.#reasoningMessages).map((messageId): AGUIEvent => ({ type: EventType.REASONING_MESSAGE_END, messageId })),
      ...sorted(this.#reasoning).map((messageId): AGUIEvent => ({ type: EventType.REASONING_END, messageId })),
      ...sorted(this.#tools).map((toolCallId): AGUIEvent => ({ type: EventType.TOOL_CALL_END, toolCallId })),
      ...sorted(this.#messages).map((messageId): AGUIEvent => ({ type: EventType.TEXT_MESSAGE_END, messageId })),
      ...(steps ? [...steps.keys()].sort().map((stepName): AGUIEvent => closedWithRun(stepName, steps.get(stepName))) : []),
    ];
    this.#reasoningMessages = this.#reasoning = this.#tools = this.#messages = this.#steps = undefined;
    return out;
  }
}
