import { describe, expect, it } from "@jest/globals";
import { take } from "rxjs";
import { EventType, type AGUIEvent } from "@ag-ui/core";
import { closeSpans } from "../../operators/close-spans.js";
import { inChain, marbles, synchronousSource } from "../support/marbles.js";

const e = {
  text: { type: EventType.TEXT_MESSAGE_START, messageId: "m2", role: "assistant" },
  text1: { type: EventType.TEXT_MESSAGE_START, messageId: "m1", role: "assistant" },
  tool: { type: EventType.TOOL_CALL_START, toolCallId: "t1", toolCallName: "x" },
  rs: { type: EventType.REASONING_START, messageId: "r" },
  rm: { type: EventType.REASONING_MESSAGE_START, messageId: "r", role: "reasoning" },
  step: { type: EventType.STEP_STARTED, stepName: "plan" },
  finished: { type: EventType.RUN_FINISHED, threadId: "th", runId: "r1" },
  error: { type: EventType.RUN_ERROR, message: "failed", code: "A2A_EXECUTION_FAILED" },
} satisfies Record<string, AGUIEvent>;

describe("closeSpans", () => {
  it("closes every open span before RUN_FINISHED: reasoning, tools, messages, steps, each sorted", () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const events = cold("abcdefg-h", { a: e.step, b: e.text, c: e.text1, d: e.tool, e: e.rs, f: e.rm, g: e.finished, h: e.text });
      expectObservable(events.pipe(closeSpans())).toBe("abcdef(123456g|)", {
        a: e.step,
        b: e.text,
        c: e.text1,
        d: e.tool,
        e: e.rs,
        f: e.rm,
        g: e.finished,
        1: { type: EventType.REASONING_MESSAGE_END, messageId: "r" },
        2: { type: EventType.REASONING_END, messageId: "r" },
        3: { type: EventType.TOOL_CALL_END, toolCallId: "t1" },
        4: { type: EventType.TEXT_MESSAGE_END, messageId: "m1" },
        5: { type: EventType.TEXT_MESSAGE_END, messageId: "m2" },
        6: { type: EventType.STEP_FINISHED, stepName: "plan" },
      });
      expectSubscriptions(events.subscriptions).toBe("^-----!");
    });
  });

  it("closes spans before RUN_ERROR too, and lets nothing through after it", () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const events = cold("ab-c", { a: e.tool, b: e.error, c: e.step });
      expectObservable(events.pipe(closeSpans())).toBe("a(xb|)", {
        a: e.tool,
        b: e.error,
        x: { type: EventType.TOOL_CALL_END, toolCallId: "t1" },
      });
      expectSubscriptions(events.subscriptions).toBe("^!");
    });
  });

  it("adds nothing for spans that were already closed", () => {
    const textEnd = { type: EventType.TEXT_MESSAGE_END, messageId: "m1" } as AGUIEvent;
    const stepEnd = { type: EventType.STEP_FINISHED, stepName: "plan" } as AGUIEvent;
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const events = cold("abcd(f|)", { a: e.text1, b: textEnd, c: e.step, d: stepEnd, f: e.finished });
      expectObservable(events.pipe(closeSpans())).toBe("abcd(f|)", { a: e.text1, b: textEnd, c: e.step, d: stepEnd, f: e.finished });
      expectSubscriptions(events.subscriptions).toBe("^---!");
    });
  });
});

describe("closeSpans and its subscription", () => {
  it("should not break unsubscription chain when unsubscribed explicitly", () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const events = cold("a-b-c-d", { a: e.step, b: e.text, c: e.tool, d: e.finished });
      expectObservable(events.pipe(inChain(closeSpans())), "^--!").toBe("a-b", { a: e.step, b: e.text });
      expectSubscriptions(events.subscriptions).toBe("^--!");
    });
  });

  it("stops a synchronous source at the terminal event, and when the subscriber leaves first", () => {
    const run = synchronousSource<AGUIEvent>([e.step, e.finished, e.text, e.tool]);
    const seen: AGUIEvent[] = [];
    let completed = false;
    run.source.pipe(closeSpans()).subscribe({ next: (event) => seen.push(event), complete: () => (completed = true) });
    expect(seen).toEqual([e.step, { type: EventType.STEP_FINISHED, stepName: "plan" }, e.finished]);
    expect(completed).toBe(true);
    expect(run.sent).toEqual([e.step, e.finished]);

    const left = synchronousSource<AGUIEvent>([e.step, e.text, e.tool, e.finished]);
    left.source.pipe(closeSpans(), take(2)).subscribe();
    expect(left.sent).toEqual([e.step, e.text]);
  });
});
