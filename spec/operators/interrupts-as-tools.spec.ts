import { describe, expect, it } from "@jest/globals";
import { take } from "rxjs";
import { EventType, type AGUIEvent } from "@ag-ui/core";
import { interruptsAsTools } from "../../operators/interrupts-as-tools.js";
import { expectValidRun } from "../support/agui.js";
import { inChain, marbles, synchronousSource } from "../support/marbles.js";

const interrupt = {
  id: "perm-1",
  reason: "tool_call",
  message: "Allow?",
  responseSchema: { type: "object" },
  metadata: { kind: "permission" },
};
const paused: AGUIEvent = {
  type: EventType.RUN_FINISHED,
  threadId: "t",
  runId: "r",
  outcome: { type: "interrupt", interrupts: [interrupt] },
};

describe("interruptsAsTools", () => {
  it("shows each interrupt as a closed frontend tool call named after its kind, right before the pause", async () => {
    const out: AGUIEvent[] = [];
    marbles().run(({ cold, expectObservable }) => {
      const events = cold("a", { a: paused }).pipe(interruptsAsTools({ runId: "r" }));
      events.subscribe((event) => out.push(event));
      expectObservable(events).toBe("(sge f)".replace(" ", ""), {
        s: {
          type: EventType.TOOL_CALL_START,
          toolCallId: "perm-1",
          toolCallName: "iac-code.interrupt.permission",
          parentMessageId: "r:tool-calls:perm-1",
        },
        g: {
          type: EventType.TOOL_CALL_ARGS,
          toolCallId: "perm-1",
          delta: '{"message":"Allow?","metadata":{"kind":"permission"},"responseSchema":{"type":"object"}}',
        },
        e: { type: EventType.TOOL_CALL_END, toolCallId: "perm-1" },
        f: paused,
      });
    });
    await expectValidRun([{ type: EventType.RUN_STARTED, threadId: "t", runId: "r" }, ...out]);
  });

  it("puts the calls in the assistant message of the turn: the last text or tool call's, unless a result ended that turn", () => {
    const text = (messageId: string): AGUIEvent => ({ type: EventType.TEXT_MESSAGE_START, messageId, role: "assistant" });
    const call = (toolCallId: string, parentMessageId: string): AGUIEvent => ({
      type: EventType.TOOL_CALL_START,
      toolCallId,
      toolCallName: "t",
      parentMessageId,
    });
    const result: AGUIEvent = { type: EventType.TOOL_CALL_RESULT, messageId: "r:tool-result:c2", toolCallId: "c2", content: "ok" };
    const parentOf = (events: AGUIEvent[]) => {
      const seen: AGUIEvent[] = [];
      synchronousSource([...events, paused])
        .source.pipe(interruptsAsTools({ runId: "r" }))
        .subscribe((event) => seen.push(event));
      return (
        seen.find((event) => event.type === EventType.TOOL_CALL_START && event.toolCallId === "perm-1") as { parentMessageId: string }
      ).parentMessageId;
    };
    expect(parentOf([text("r:m")])).toBe("r:m");
    expect(parentOf([text("r:m"), call("c1", "r:tool-calls:c1")])).toBe("r:tool-calls:c1");
    expect(parentOf([text("r:m"), call("c2", "r:m"), result])).toBe("r:tool-calls:perm-1");
  });

  it("leaves a successful end alone", () => {
    const done: AGUIEvent = { type: EventType.RUN_FINISHED, threadId: "t", runId: "r", outcome: { type: "success" } };
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const events = cold("a|", { a: done });
      expectObservable(events.pipe(interruptsAsTools({ runId: "r" }))).toBe("a|", { a: done });
      expectSubscriptions(events.subscriptions).toBe("^!");
    });
  });
});

describe("interruptsAsTools and its subscription", () => {
  const started: AGUIEvent = { type: EventType.RUN_STARTED, threadId: "t", runId: "r" };
  const step: AGUIEvent = { type: EventType.STEP_STARTED, stepName: "s" };

  it("should not break unsubscription chain when unsubscribed explicitly", () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const events = cold("a-b-c|", { a: started, b: step, c: paused });
      expectObservable(events.pipe(inChain(interruptsAsTools({ runId: "r" }))), "^-!").toBe("a", { a: started });
      expectSubscriptions(events.subscriptions).toBe("^-!");
    });
  });

  it("reads a synchronous source, and stops it when the subscriber leaves in the middle of an interrupt's tool call", () => {
    const whole = synchronousSource([started, paused]);
    const seen: AGUIEvent[] = [];
    whole.source.pipe(interruptsAsTools({ runId: "r" })).subscribe((event) => seen.push(event));
    expect(seen.map((event) => event.type)).toEqual([
      EventType.RUN_STARTED,
      EventType.TOOL_CALL_START,
      EventType.TOOL_CALL_ARGS,
      EventType.TOOL_CALL_END,
      EventType.RUN_FINISHED,
    ]);

    const { source, sent } = synchronousSource([started, paused, step, step]);
    source.pipe(interruptsAsTools({ runId: "r" }), take(2)).subscribe();
    expect(sent).toEqual([started, paused]);
  });
});
