import { describe, it } from "@jest/globals";
import { EventType, type AGUIEvent } from "@ag-ui/core";
import { interruptsAsTools } from "../../operators/interrupts-as-tools.js";
import { expectValidRun } from "../support/agui.js";
import { marbles } from "../support/marbles.js";

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
      const events = cold("a", { a: paused }).pipe(interruptsAsTools());
      events.subscribe((event) => out.push(event));
      expectObservable(events).toBe("(sge f)".replace(" ", ""), {
        s: { type: EventType.TOOL_CALL_START, toolCallId: "perm-1", toolCallName: "iac-code.interrupt.permission" },
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

  it("leaves a successful end alone", () => {
    const done: AGUIEvent = { type: EventType.RUN_FINISHED, threadId: "t", runId: "r", outcome: { type: "success" } };
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("a", { a: done }).pipe(interruptsAsTools())).toBe("a", { a: done });
    });
  });
});
