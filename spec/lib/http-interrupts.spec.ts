import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { EventType, type AGUIEvent, type Interrupt } from "@ag-ui/core";
import { expectValidRun } from "../support/agui.js";
import { interruptScript, permissionProjection, questionProjection, resourceSelectionProjection } from "../support/interrupt-scripts.js";
import { postRun, runInput, startHarness, uniqueId, waitFor, type Harness } from "../support/service.js";

type Input = ReturnType<typeof runInput>;
const ofType = <T extends AGUIEvent["type"]>(events: AGUIEvent[], type: T) =>
  events.filter((event): event is Extract<AGUIEvent, { type: T }> => event.type === type);
const interruptsOf = (events: AGUIEvent[]): Interrupt[] => {
  const last = events.at(-1) as { type: string; outcome?: { type: string; interrupts?: Interrupt[] } };
  expect(last.type).toBe(EventType.RUN_FINISHED);
  expect(last.outcome?.type).toBe("interrupt");
  return last.outcome!.interrupts!;
};
/** The follow-up request on the same thread: a new run id, the same invocation. */
const next = (first: Input, overrides: Record<string, unknown> = {}) => ({ ...first, runId: uniqueId("run"), ...overrides });
const resume = (first: Input, entries: unknown[]) => next(first, { resume: entries });

describe("interrupts and resume over HTTP", () => {
  let harness: Harness;
  const scripts = [
    interruptScript("permission", permissionProjection),
    interruptScript("question", questionProjection),
    interruptScript("resource", resourceSelectionProjection),
  ];
  beforeAll(async () => {
    harness = await startHarness({ script: (turn) => scripts.map((s) => s(turn)).find(Boolean) }, { interruptTtlS: 600 });
  });
  afterAll(() => harness.close());
  const post = (body: unknown) => postRun(harness.service.url, body);
  const calls = (method: string) => harness.kernel.received.filter((call) => call.method === method);

  async function interrupted(name = "permission"): Promise<{ first: Input; interrupt: Interrupt; events: AGUIEvent[] }> {
    const first = runInput(name);
    const { events } = await post(first);
    await expectValidRun(events);
    const [interrupt] = interruptsOf(events);
    return { first, interrupt: interrupt!, events };
  }

  it("ends a run waiting for a permission with RUN_FINISHED {outcome: interrupt}, spans closed, nothing unkept shown", async () => {
    const { interrupt, events } = await interrupted();
    expect(interrupt).toEqual({
      id: "perm-1",
      reason: "tool_call",
      message: "Allow deploying stack demo-vpc?",
      toolCallId: "toolu-deploy",
      responseSchema: expect.objectContaining({ required: ["decision"] }),
      expiresAt: expect.stringMatching(/Z$/),
      metadata: expect.objectContaining({
        schemaVersion: 1,
        kind: "permission",
        title: "Deploy stack demo-vpc",
        safeSummary: "Creates 3 resources in cn-hangzhou",
      }),
    });
    expect(JSON.stringify(events)).not.toContain("kernel-internal-secret");
    // The tool call that asked stays pending: closed as a span, answered later by its result.
    expect(ofType(events, EventType.TOOL_CALL_END).map((event) => event.toolCallId)).toEqual(["toolu-deploy"]);
  });

  it("persists the interrupt before announcing it: the thread file holds it, without secrets or text", async () => {
    const { first } = await interrupted();
    const files = readdirSync(path.join(harness.stateDir, "threads"));
    const raw = files
      .map((file) => readFileSync(path.join(harness.stateDir, "threads", file), "utf8"))
      .find((text) => text.includes(first.threadId));
    expect(raw).toBeDefined();
    const state = JSON.parse(raw!);
    expect(Object.keys(state.execution.pending)).toEqual(["perm-1"]);
    expect(raw).not.toContain("kernel-internal-secret");
    expect(raw).not.toContain("I will deploy");
  });

  it("resumes with allow_once: sends exactly the six-key permission part to the same task, then finishes", async () => {
    const { first, events } = await interrupted();
    const taskId = (ofType(events, EventType.CUSTOM).find((event) => event.name === "iac-code.session.v1")!.value as { taskId: string })
      .taskId;
    const second = resume(first, [{ interruptId: "perm-1", status: "resolved", payload: { decision: "allow_once" } }]);
    const { status, events: resumed } = await post(second);
    expect(status).toBe(200);
    await expectValidRun(resumed);
    expect(resumed.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });

    const answer = calls("SendStreamingMessage").at(-1)!.params as { message: Record<string, unknown> };
    expect(answer.message).toMatchObject({ messageId: `agui-resume-${second.runId}-perm-1`, role: "ROLE_USER", taskId });
    expect(answer.message.parts).toEqual([
      {
        data: {
          schemaVersion: 1,
          kind: "permission",
          requestTaskId: taskId,
          inputId: "perm-1",
          toolUseId: "toolu-deploy",
          decision: "allow_once",
        },
        mediaType: "application/json",
      },
    ]);
    // The tool call closes with its result only; the repeated text is not sent twice (contract §6).
    expect(ofType(resumed, EventType.TOOL_CALL_START)).toEqual([]);
    expect(ofType(resumed, EventType.TOOL_CALL_RESULT).map((event) => event.toolCallId)).toEqual(["toolu-deploy"]);
    expect(
      ofType(resumed, EventType.TEXT_MESSAGE_CONTENT)
        .map((event) => event.delta)
        .join(""),
    ).toBe("Done.");
  });

  it("sends deny for a cancelled permission (R-RES-4)", async () => {
    const { first } = await interrupted();
    const { events } = await post(resume(first, [{ interruptId: "perm-1", status: "cancelled" }]));
    await expectValidRun(events);
    const answer = calls("SendStreamingMessage").at(-1)!.params as { message: { parts: Array<{ data: { decision: string } }> } };
    expect(answer.message.parts[0]!.data.decision).toBe("deny");
  });

  it("answers a question with the chosen option's label as text, closing its tool call first", async () => {
    const { first, interrupt } = await interrupted("question");
    expect(interrupt).toMatchObject({
      id: "q-1",
      reason: "input_required",
      message: "Which region?\n- cn-hangzhou: Hangzhou\n- cn-shanghai: Shanghai",
    });
    const second = resume(first, [{ interruptId: "q-1", status: "resolved", payload: { selectedId: "cn-shanghai" } }]);
    const { events } = await post(second);
    await expectValidRun(events);
    const answer = calls("SendStreamingMessage").at(-1)!.params as { message: Record<string, unknown> };
    expect(answer.message).toMatchObject({ messageId: `agui-resume-${second.runId}`, parts: [{ text: "Shanghai" }] });
    const results = ofType(events, EventType.TOOL_CALL_RESULT);
    expect(results[0]).toMatchObject({ toolCallId: "toolu-ask", content: "Shanghai" });
  });

  it("answers a cloud resource selection with the kernel's prefix and compact JSON as the only text part, its label as an early result", async () => {
    const { first, interrupt } = await interrupted("resource");
    const second = resume(first, [{ interruptId: interrupt.id, status: "resolved", payload: { value: "vpc-1", label: "main VPC" } }]);
    const { events } = await post(second);
    await expectValidRun(events);
    const answer = calls("SendStreamingMessage").at(-1)!.params as { message: { parts: Array<{ text: string }> } };
    expect(answer.message.parts).toHaveLength(1);
    const [text] = answer.message.parts.map((part) => part.text);
    expect(text!.startsWith("IAC_CODE_RESOURCE_SELECTION:{")).toBe(true);
    expect(JSON.parse(text!.slice("IAC_CODE_RESOURCE_SELECTION:".length))).toMatchObject({
      kind: "cloud_resource_selection",
      status: "selected",
      toolUseId: "toolu-select",
      value: "vpc-1",
      label: "main VPC",
    });
    // The selector's tool call is closed with the label the user picked, before anything the kernel says after it.
    const results = ofType(events, EventType.TOOL_CALL_RESULT).filter((event) => event.toolCallId === "toolu-select");
    expect(results.map((event) => event.content)).toEqual(["main VPC"]);
    expect(events.indexOf(results[0]!)).toBeLessThan(events.findIndex((event) => event.type === EventType.TEXT_MESSAGE_START));
  });

  it("refuses a new message while interrupts are pending: 409 RESUME_REQUIRED", async () => {
    const { first } = await interrupted();
    const { status, json } = await post(next(first, { messages: [{ id: uniqueId("m"), role: "user", content: "hello?" }] }));
    expect(status).toBe(409);
    expect(json).toMatchObject({ error: { code: "RESUME_REQUIRED" } });
  });

  it("tells a replayed request DUPLICATE_RUN_ID and a reused run id with another body RUN_ID_CONFLICT", async () => {
    const first = runInput("chat");
    await expectValidRun((await post(first)).events);
    expect((await post(first)).json).toMatchObject({ error: { code: "DUPLICATE_RUN_ID" } });
    const changed = { ...first, messages: [{ id: "other", role: "user", content: "something else" }] };
    const { status, json } = await post(changed);
    expect(status).toBe(409);
    expect(json).toMatchObject({ error: { code: "RUN_ID_CONFLICT" } });
  });

  it("binds a thread to its first cwd and userId: THREAD_BINDING_CONFLICT", async () => {
    const first = runInput("chat", {}, { userId: "alice" });
    await post(first);
    const otherUser = next(first, { forwardedProps: { iacCode: { ...first.forwardedProps.iacCode, userId: "mallory" } } });
    expect((await post(otherUser)).json).toMatchObject({ error: { code: "THREAD_BINDING_CONFLICT" } });
    const otherCwd = next(first, {
      forwardedProps: {
        iacCode: { ...first.forwardedProps.iacCode, cwd: mkdtempSync(path.join(first.forwardedProps.iacCode.cwd, "sub-")) },
      },
    });
    expect((await post(otherCwd)).status).toBe(409);
  });

  it("answers EXECUTION_LOST for a resume of an unknown thread or with another rosInvocationId", async () => {
    const unknown = runInput("x", { resume: [{ interruptId: "perm-1", status: "cancelled" }] });
    expect((await post(unknown)).json).toMatchObject({ error: { code: "EXECUTION_LOST" } });
    const { first } = await interrupted();
    const other = resume(first, [{ interruptId: "perm-1", status: "cancelled" }]);
    other.forwardedProps = { iacCode: { ...first.forwardedProps.iacCode, rosInvocationId: "ros-other" } };
    const { status, json } = await post(other);
    expect(status).toBe(409);
    expect(json).toMatchObject({ error: { code: "EXECUTION_LOST" } });
  });

  it.each([
    ["INCOMPLETE_RESUME", []],
    [
      "INCOMPLETE_RESUME",
      [
        { interruptId: "perm-1", status: "cancelled" },
        { interruptId: "perm-1", status: "cancelled" },
      ],
    ],
    [
      "UNKNOWN_INTERRUPT",
      [
        { interruptId: "perm-1", status: "cancelled" },
        { interruptId: "nope", status: "cancelled" },
      ],
    ],
    ["RESUME_PAYLOAD_INVALID", [{ interruptId: "perm-1", status: "resolved", payload: { decision: "allow_always" } }]],
    ["RESUME_PAYLOAD_INVALID", [{ interruptId: "perm-1", status: "resolved" }]],
  ])("ends a bad resume with RUN_ERROR %s, sends nothing, and leaves the interrupt answerable", async (code, entries) => {
    const { first } = await interrupted();
    const before = calls("SendStreamingMessage").length;
    const { status, events } = await post(resume(first, entries));
    expect(status).toBe(200);
    await expectValidRun(events);
    expect(events.at(-1)).toMatchObject({ type: EventType.RUN_ERROR, code });
    expect(calls("SendStreamingMessage").length).toBe(before);
    const retry = await post(resume(first, [{ interruptId: "perm-1", status: "resolved", payload: { decision: "allow_once" } }]));
    expect(retry.events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });
  });

  it("never sends an accepted answer again: RESUME_ALREADY_APPLIED", async () => {
    const { first } = await interrupted();
    const entries = [{ interruptId: "perm-1", status: "resolved", payload: { decision: "allow_once" } }];
    await post(resume(first, entries));
    const before = calls("SendStreamingMessage").length;
    const { events } = await post(resume(first, entries));
    await expectValidRun(events);
    expect(events.at(-1)).toMatchObject({ type: EventType.RUN_ERROR, code: "RESUME_ALREADY_APPLIED" });
    expect(calls("SendStreamingMessage").length).toBe(before);
  });

  it("does not cancel the task when the client leaves after the interrupt: the run ended durably", async () => {
    const { events } = await interrupted();
    const taskId = (ofType(events, EventType.CUSTOM).find((event) => event.name === "iac-code.session.v1")!.value as { taskId: string })
      .taskId;
    expect(calls("CancelTask").some((call) => (call.params as { id: string }).id === taskId)).toBe(false);
  });

  it("cancels an execution through the cancel route, clearing its interrupts", async () => {
    const { first, events } = await interrupted();
    const { executionId, taskId } = ofType(events, EventType.CUSTOM).find((event) => event.name === "iac-code.session.v1")!.value as {
      executionId: string;
      taskId: string;
    };
    const cancel = (id: string, body: unknown) =>
      fetch(`${harness.service.url}/extensions/iac-code/v1/executions/${id}/cancel`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    const identity = { threadId: first.threadId, rosInvocationId: "ros-1" };

    expect((await cancel(executionId, { ...identity, rosInvocationId: "ros-other" })).status).toBe(404);
    expect(await (await cancel(executionId, { threadId: first.threadId })).json()).toMatchObject({ error: { code: "INVALID_INPUT" } });
    const response = await cancel(executionId, identity);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ executionId, status: "cancelled" });
    await waitFor(() => calls("CancelTask").some((call) => (call.params as { id: string }).id === taskId));
    expect(await (await cancel(executionId, identity)).json()).toEqual({ executionId, status: "already_terminal" });
    const missing = await cancel("no-such-execution", identity);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ error: { code: "EXECUTION_NOT_FOUND" } });

    // Its interrupts are gone: a new message is welcome again, and a resume finds nothing to answer.
    const lost = await post(resume(first, [{ interruptId: "perm-1", status: "cancelled" }]));
    expect(lost.events.at(-1)).toMatchObject({ type: EventType.RUN_ERROR, code: "EXECUTION_LOST" });
    const again = await post(next(first, { messages: [{ id: uniqueId("m"), role: "user", content: "chat" }] }));
    expect(again.events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });
  });
});

describe("interrupts as frontend tools, for generic clients (R-SIB-4)", () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness({ script: interruptScript("permission", permissionProjection) });
  });
  afterAll(() => harness.close());

  it("opens and closes a tool call named iac-code.interrupt.<kind> with the interrupt id, and answers it in the resumed run", async () => {
    const first = {
      ...runInput("permission"),
      forwardedProps: { ...runInput("x").forwardedProps, iacCodeDisplay: { interruptsAsTools: true } },
    };
    const { events } = await postRun(harness.service.url, first);
    await expectValidRun(events);
    const start = ofType(events, EventType.TOOL_CALL_START).find((event) => event.toolCallId === "perm-1");
    expect(start).toMatchObject({ toolCallName: "iac-code.interrupt.permission" });
    expect(ofType(events, EventType.TOOL_CALL_END).map((event) => event.toolCallId)).toContain("perm-1");
    interruptsOf(events);

    const { events: resumed } = await postRun(
      harness.service.url,
      resume(first as Input, [{ interruptId: "perm-1", status: "resolved", payload: { decision: "allow_once" } }]),
    );
    await expectValidRun(resumed);
    const result = ofType(resumed, EventType.TOOL_CALL_RESULT).find((event) => event.toolCallId === "perm-1");
    expect(JSON.parse(result!.content as string)).toEqual({ status: "resolved", payload: { decision: "allow_once" } });
  });
});
