import type { AGUIEvent } from "@ag-ui/core";
import { describe, expect, it } from "@jest/globals";
import { expectValidRun, openSpansAtTheEnd } from "./agui.js";

const events = (...list: object[]) => list as AGUIEvent[];

describe("the checks every test stream passes", () => {
  const erroredWithAnOpenMessage = events(
    { type: "RUN_STARTED", threadId: "t", runId: "r" },
    { type: "STEP_STARTED", stepName: "plan" },
    { type: "TEXT_MESSAGE_START", messageId: "m1", role: "assistant" },
    { type: "TOOL_CALL_START", toolCallId: "c1", toolCallName: "ls" },
    { type: "TOOL_CALL_END", toolCallId: "c1" },
    { type: "STEP_FINISHED", stepName: "plan" },
    { type: "RUN_ERROR", message: "kernel gone", code: "A2A_UNAVAILABLE" },
  );

  it("name the spans a stream leaves open, which the AG-UI verifier lets a RUN_ERROR do", () => {
    expect(openSpansAtTheEnd(erroredWithAnOpenMessage)).toEqual(["TEXT_MESSAGE_START m1"]);
  });

  it("count a span opened twice under one name as open until its second end", () => {
    const twice = events(
      { type: "STEP_STARTED", stepName: "plan" },
      { type: "STEP_STARTED", stepName: "plan" },
      { type: "STEP_FINISHED", stepName: "plan" },
    );
    expect(openSpansAtTheEnd(twice)).toEqual(["STEP_STARTED plan"]);
    expect(openSpansAtTheEnd([...twice, { type: "STEP_FINISHED", stepName: "plan" } as AGUIEvent])).toEqual([]);
  });

  it("refuse such a stream, and take it once the span is closed", async () => {
    await expect(expectValidRun(erroredWithAnOpenMessage)).rejects.toThrow(/TEXT_MESSAGE_START m1/);
    const closed = [...erroredWithAnOpenMessage];
    closed.splice(-1, 0, { type: "TEXT_MESSAGE_END", messageId: "m1" } as AGUIEvent);
    await expectValidRun(closed);
  });
});
