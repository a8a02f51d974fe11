import { afterAll, beforeAll, describe, expect, it, jest } from "@jest/globals";
import { EventType, type AGUIEvent } from "@ag-ui/core";
import { expectValidRun } from "../support/agui.js";
import { postRun, runInput, script, startHarness, waitFor, type Harness } from "../support/service.js";

const types = (events: AGUIEvent[]) => events.map((event) => event.type);
const ofType = <T extends AGUIEvent["type"]>(events: AGUIEvent[], type: T) =>
  events.filter((event): event is Extract<AGUIEvent, { type: T }> => event.type === type);

describe("POST / against a real A2A 1.0 kernel", () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness();
  });
  afterAll(() => harness.close());

  it("streams the chat fixture as a valid AG-UI run: RUN_STARTED, session, streamed text, RUN_FINISHED with usage", async () => {
    const input = runInput("chat", { parentRunId: "run-before" });
    const { status, contentType, raw, events } = await postRun(harness.service.url, input);
    expect(status).toBe(200);
    expect(contentType).toMatch(/^text\/event-stream/);
    expect(raw).not.toContain("\r");
    await expectValidRun(events);

    expect(events[0]).toEqual({
      type: EventType.RUN_STARTED,
      threadId: input.threadId,
      runId: input.runId,
      parentRunId: "run-before",
      protocolVersion: "1.0",
      input,
      timestamp: expect.any(Number),
    });
    const sessions = ofType(events, EventType.CUSTOM).filter((event) => event.name === "iac-code.session.v1");
    expect(sessions).toHaveLength(1);
    expect(sessions[0]!.value).toMatchObject({
      schemaVersion: 1,
      threadId: input.threadId,
      aguiRunId: input.runId,
      rosInvocationId: "ros-1",
    });
    expect(sessions[0]!.value.taskId).toEqual(expect.any(String));
    expect(sessions[0]!.value.sessionId).toEqual(expect.any(String));

    const starts = ofType(events, EventType.TEXT_MESSAGE_START);
    const contents = ofType(events, EventType.TEXT_MESSAGE_CONTENT);
    expect(starts).toHaveLength(1);
    expect(contents.length).toBeGreaterThan(1);
    // assistantFinal repeats the whole answer: it must not be sent a second time.
    const text = contents.map((event) => event.delta).join("");
    expect(text.length).toBeGreaterThan(0);
    expect(contents.some((event) => event.delta === text)).toBe(false);

    const finished = events.at(-1);
    expect(finished).toMatchObject({
      type: EventType.RUN_FINISHED,
      threadId: input.threadId,
      runId: input.runId,
      outcome: { type: "success" },
    });
    expect((finished as { usage?: unknown[] }).usage?.length).toBeGreaterThan(0);
  });

  it("projects reasoning, tool calls, tool progress and artifacts from the reasoning-tools fixture", async () => {
    const { events } = await postRun(harness.service.url, runInput("reasoning-tools"));
    await expectValidRun(events);
    const seen = new Set(types(events));
    for (const type of [
      EventType.REASONING_START,
      EventType.REASONING_MESSAGE_START,
      EventType.REASONING_MESSAGE_CONTENT,
      EventType.REASONING_MESSAGE_END,
      EventType.REASONING_END,
      EventType.TOOL_CALL_START,
      EventType.TOOL_CALL_ARGS,
      EventType.TOOL_CALL_END,
      EventType.TOOL_CALL_RESULT,
    ]) {
      expect(seen).toContain(type);
    }
    expect(ofType(events, EventType.REASONING_MESSAGE_START)[0]).toMatchObject({ role: "reasoning" });
    const customs = ofType(events, EventType.CUSTOM).map((event) => event.name);
    expect(customs).toContain("iac-code.tool-progress.v1");
    expect(customs).toContain("iac-code.artifact.v1");
    const statuses = ofType(events, EventType.TOOL_CALL_RESULT).map(
      (event) => (event.metadata as { "iac-code": { status: string } })["iac-code"].status,
    );
    expect(statuses).toEqual(expect.arrayContaining(["completed", "failed"]));
    expect(events.at(-1)?.type).toBe(EventType.RUN_FINISHED);
  });

  it("sends a message that never streamed as one whole-message triplet", async () => {
    const { events } = await postRun(harness.service.url, runInput("whole-text"));
    await expectValidRun(events);
    const text = types(events).filter((type) => type.startsWith("TEXT_MESSAGE"));
    expect(text).toEqual([EventType.TEXT_MESSAGE_START, EventType.TEXT_MESSAGE_CONTENT, EventType.TEXT_MESSAGE_END]);
  });

  it("ends a failed task with RUN_ERROR A2A_EXECUTION_FAILED, the kernel's reason as its detail, after closing the open message", async () => {
    const { events } = await postRun(harness.service.url, runInput("failing-run"));
    await expectValidRun(events);
    const last = events.at(-1);
    // The reference's sentence stays the message; the failed status message's text is the kernel's reason.
    expect(last).toMatchObject({
      type: EventType.RUN_ERROR,
      code: "A2A_EXECUTION_FAILED",
      message: "The A2A execution failed.",
      metadata: { "iac-code": { detail: expect.stringContaining("quota exceeded (HTTP 429)") } },
    });
    expect(types(events).slice(-2)[0]).toBe(EventType.TEXT_MESSAGE_END);
  });

  it("ends a mid-stream kernel error with RUN_ERROR and every span closed", async () => {
    // The SDK kernel logs the error it sends; that noise is the kernel's, not ours.
    const quiet = jest.spyOn(console, "error").mockImplementation(() => {});
    const { events } = await postRun(harness.service.url, runInput("stream-error")).finally(() => quiet.mockRestore());
    await expectValidRun(events);
    expect(events.at(-1)).toMatchObject({ type: EventType.RUN_ERROR, code: "A2A_EXECUTION_FAILED" });
  });
});

describe("run endings and unknown input from the kernel", () => {
  let harness: Harness;
  const scripts = new Map<string, () => ReturnType<typeof script.status>[]>([
    ["cancelled", () => [script.task(), script.status("WORKING", undefined, "partial"), script.status("CANCELED")]],
    ["cut", () => [script.task(), script.status("WORKING", { tool: { status: "started", toolUseId: "u1", name: "deploy" } })]],
    ["input-required", () => [script.task(), script.status("WORKING", undefined, "Need more"), script.status("INPUT_REQUIRED")]],
    [
      "unknown",
      () => [
        script.task(),
        script.status("WORKING", {
          someFutureKey: { a: 1 },
          tool: { status: "teleported", toolUseId: "u9" },
          thinking: { type: "encrypted", text: "x" },
        }),
        {
          delayMs: 0,
          frame: {
            statusUpdate: {
              taskId: "${taskId}",
              contextId: "${contextId}",
              status: {
                state: "TASK_STATE_WORKING",
                message: {
                  messageId: "m",
                  role: "ROLE_AGENT",
                  parts: [{ raw: "AAAA" }, { url: "https://x" }, { data: { a: 1 } }, { text: "ok" }],
                },
              },
            },
          },
        },
        {
          delayMs: 0,
          frame: { statusUpdate: { taskId: "${taskId}", contextId: "${contextId}", status: { state: "TASK_STATE_DREAMING" } } },
        },
        script.status("COMPLETED"),
      ],
    ],
  ]);
  beforeAll(async () => {
    harness = await startHarness({ script: ({ text }) => scripts.get(text)?.() });
  });
  afterAll(() => harness.close());

  it("ends a cancelled task with RUN_ERROR CANCELLED", async () => {
    const { events } = await postRun(harness.service.url, runInput("cancelled"));
    await expectValidRun(events);
    expect(events.at(-1)).toMatchObject({ type: EventType.RUN_ERROR, code: "CANCELLED" });
  });

  it("fails a run whose stream ends while the task still works, closes the open tool, and cancels the task", async () => {
    const { events } = await postRun(harness.service.url, runInput("cut"));
    await expectValidRun(events);
    expect(types(events).slice(-2)).toEqual([EventType.TOOL_CALL_END, EventType.RUN_ERROR]);
    expect(events.at(-1)).toMatchObject({ code: "A2A_EXECUTION_FAILED" });
    await waitFor(() => harness.kernel.received.some((call) => call.method === "CancelTask"));
  });

  it("pauses an input-required task that carries no iac-code input at a free-text interrupt (issue 16: any A2A agent)", async () => {
    const { events } = await postRun(harness.service.url, runInput("input-required"));
    await expectValidRun(events);
    expect(events.at(-1)).toMatchObject({
      type: EventType.RUN_FINISHED,
      outcome: { type: "interrupt", interrupts: [{ reason: "input_required", responseSchema: { oneOf: [{ required: ["freeText"] }] } }] },
    });
  });

  it("ignores unknown parts, metadata keys, tool statuses, thinking types and states without failing the run", async () => {
    const { events } = await postRun(harness.service.url, runInput("unknown"));
    await expectValidRun(events);
    expect(ofType(events, EventType.TEXT_MESSAGE_CONTENT).map((event) => event.delta)).toEqual(["ok"]);
    expect(events.at(-1)?.type).toBe(EventType.RUN_FINISHED);
  });
});
