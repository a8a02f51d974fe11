/**
 * The service in front of a stock A2A 0.3 agent (`@a2a-js/sdk` 0.3, engineer
 * H's `lib/kernel-v03`) that sends no iac-code metadata, reading the dialect
 * from its agent card: a chat streams, a question is asked and answered on
 * the same task, a failure is a RUN_ERROR, a dropped stream is followed
 * through tasks/resubscribe, and a cancel or a client that leaves cancels
 * the task. Every stream passes the usual checks.
 */
import { afterAll, beforeAll, describe, expect, it, jest } from "@jest/globals";
import { EventType, type AGUIEvent, type Interrupt } from "@ag-ui/core";
import { startReplayKernelV03, type ReplayKernelV03 } from "../../lib/kernel-v03/replay-kernel.js";
import type { ReplayTurn } from "../../lib/kernel/replay-executor.js";
import { startService, type RunningService } from "../../lib/server.js";
import { expectValidRun } from "../support/agui.js";
import { httpAgent, runHttpAgent, transcript, userMessage } from "../support/http-agent.js";
import { postRun, runInput, script, startHarness, testConfig, uniqueId, waitFor, type Harness } from "../support/service.js";
import { openRun, parseSse } from "../support/service-process.js";

type Input = ReturnType<typeof runInput>;
const ofType = <T extends AGUIEvent["type"]>(events: AGUIEvent[], type: T) =>
  events.filter((event): event is Extract<AGUIEvent, { type: T }> => event.type === type);
const textOf = (events: AGUIEvent[]) =>
  ofType(events, EventType.TEXT_MESSAGE_CONTENT)
    .map((event) => event.delta)
    .join("");
const sessionOf = (events: AGUIEvent[]) =>
  ofType(events, EventType.CUSTOM).find((event) => event.name === "iac-code.session.v1")!.value as {
    executionId: string;
    taskId: string;
  };

/** A line a test holds until it lets go: the turn named, at the line index asked for (negative: from the end). */
class HeldLines {
  #release: (() => void) | undefined;
  #held: Promise<void> | undefined;
  constructor(
    readonly text: string,
    readonly index: number,
  ) {}
  hold = (turn: ReplayTurn, index: number, count: number): Promise<void> | undefined => {
    if (turn.text !== this.text || turn.turnIndex !== 0 || index !== (this.index < 0 ? count + this.index : this.index)) return undefined;
    this.#held ??= new Promise<void>((resolve) => (this.#release = resolve));
    return this.#held;
  };
  release() {
    this.#release?.();
  }
}

describe("the service in front of an A2A 0.3 agent without iac-code metadata", () => {
  let kernel: ReplayKernelV03;
  let service: RunningService;
  // slow-chat's last line waits until the test has acted; drops' first line after the cut waits for the re-subscribe.
  const slow = new HeldLines("slow-chat", -1);
  // A hold lets go once: a test that plays drops again arms a new one.
  let dropped = new HeldLines("drops", -2);
  const observed = new HeldLines("/slow-chat", -1);

  beforeAll(async () => {
    // The SDK warns of what the tests do on purpose (a re-subscribe to a finished task).
    jest.spyOn(console, "warn").mockImplementation(() => undefined);
    kernel = await startReplayKernelV03({
      timeScale: 0,
      holdLine: (turn, index, count) =>
        slow.hold(turn, index, count) ?? dropped.hold(turn, index, count) ?? observed.hold(turn, index, count),
    });
    service = await startService(testConfig({ a2aUrl: kernel.url }));
  });
  afterAll(async () => {
    slow.release();
    dropped.release();
    observed.release();
    await service.close();
    await kernel.close();
    jest.restoreAllMocks();
  });

  const calls = (method: string) => kernel.received.filter((call) => call.method === method);
  const post = async (body: unknown) => {
    const result = await postRun(service.url, body);
    await expectValidRun(result.events);
    return result;
  };

  it("says in /health which agent and dialect it is in front of", async () => {
    const health = (await (await fetch(`${service.url}/health`)).json()) as Record<string, unknown>;
    expect(health).toMatchObject({ executionKernel: "a2a-0.3", agent: { a2aDialect: "0.3", name: expect.any(String) } });
  });

  it("plain-chat: the status message and the text artifact stream as text; HttpAgent ends with the agent's answer", async () => {
    const agent = httpAgent(service.url, { messages: [userMessage("plain-chat")] });
    const run = await runHttpAgent(agent, { forwardedProps: runInput("").forwardedProps });

    expect(run.error).toBeUndefined();
    await expectValidRun(run.events);
    expect(calls("message/stream").length).toBeGreaterThan(0);
    expect(calls("SendStreamingMessage")).toEqual([]);
    expect(transcript(run.messages)).toEqual([
      { role: "user", content: "plain-chat" },
      { role: "assistant", content: "Let me answer that. " },
      { role: "assistant", content: "Hi! This is a plain A2A 0.3 agent built on @a2a-js/sdk 0.3, answering through the AG-UI service." },
    ]);
    expect(run.events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });
  });

  it("ask-input: asks in free text, the answer goes to the same task as a text message, and the run finishes", async () => {
    const first: Input = runInput("ask-input");
    const asked = await post(first);
    const last = asked.events.at(-1) as { type: string; outcome?: { type: string; interrupts?: Interrupt[] } };
    expect(last).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "interrupt" } });
    const [interrupt] = last.outcome!.interrupts!;
    expect(interrupt).toMatchObject({ reason: "input_required", message: "Which colour should the button be?" });
    expect(interrupt!.responseSchema).toEqual({ oneOf: [expect.objectContaining({ required: ["freeText"] })] });
    const { taskId } = sessionOf(asked.events);

    const answer = {
      ...first,
      runId: uniqueId("run"),
      resume: [{ interruptId: interrupt!.id, status: "resolved", payload: { freeText: "Teal" } }],
    };
    const { events } = await post(answer);

    const sent = calls("message/stream").at(-1)!.params as { message: Record<string, unknown> };
    expect(sent.message).toMatchObject({ kind: "message", role: "user", taskId, parts: [{ kind: "text", text: "Teal" }] });
    expect(textOf(events)).toBe("Thanks for the answer. The button will be painted the colour you chose.");
    expect(events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });
  });

  it("auth-required: asks the same way, and the answer completes the task", async () => {
    const first: Input = runInput("auth-required");
    const asked = await post(first);
    const interrupt = (asked.events.at(-1) as { outcome: { interrupts: Interrupt[] } }).outcome.interrupts[0]!;
    expect(interrupt.message).toMatch(/sign in/);
    const { events } = await post({
      ...first,
      runId: uniqueId("run"),
      resume: [{ interruptId: interrupt.id, status: "resolved", payload: { freeText: "done" } }],
    });
    expect(events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });
  });

  it("fails: the agent's failure ends in RUN_ERROR A2A_EXECUTION_FAILED, after the text it sent", async () => {
    const { events } = await post(runInput("fails"));
    expect(textOf(events)).toContain("Looking up the weather service.");
    expect(events.at(-1)).toMatchObject({ type: EventType.RUN_ERROR, code: "A2A_EXECUTION_FAILED" });
  });

  it("data-and-file: the artifact is an iac-code.artifact.v1 event and the run finishes with no text", async () => {
    const { events } = await post(runInput("data-and-file"));
    const artifacts = ofType(events, EventType.CUSTOM).filter((event) => event.name === "iac-code.artifact.v1");
    expect(artifacts).toHaveLength(1);
    expect(artifacts[0]!.value).toMatchObject({
      schemaVersion: 1,
      name: "deployment-report",
      parts: [{ data: expect.any(Object) }, expect.any(Object)],
    });
    expect(ofType(events, EventType.TEXT_MESSAGE_START)).toEqual([]);
    expect(events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });
  });

  it("message-reply: an agent that answers with a bare message finishes the run with it", async () => {
    const { events } = await post(runInput("message-reply"));
    expect(textOf(events)).toMatch(/^Hello! This whole answer is one A2A message/);
    expect(events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });
  });

  /** Plays drops, letting its line after the cut go once the service has re-subscribed (tasks/resubscribe). */
  const afterResubscribe = async <T>(run: () => Promise<T>): Promise<T> => {
    const resubscribes = calls("tasks/resubscribe").length;
    const running = run();
    await waitFor(() => calls("tasks/resubscribe").length > resubscribes);
    // The SDK joins the task's events right after the snapshot it answers first, within the same turn of the
    // event loop as the request; the held line is published after that.
    await new Promise((resolve) => setImmediate(resolve));
    dropped.release();
    return running;
  };
  const WHOLE_DROPS_ANSWER =
    "This answer is streamed in three parts, and the stream breaks after this one; the last part comes through tasks/resubscribe.";

  it("drops, from a plain chat client (no run mode): the cut stream is followed through tasks/get and tasks/resubscribe, and HttpAgent ends with the whole answer once", async () => {
    const agent = httpAgent(service.url, { messages: [userMessage("drops")] });
    const run = await afterResubscribe(() => runHttpAgent(agent, { forwardedProps: runInput("").forwardedProps }));

    expect(run.error).toBeUndefined();
    await expectValidRun(run.events);
    const { taskId } = sessionOf(run.events);
    const ofTask = (method: string) => calls(method).filter((call) => (call.params as { id?: string }).id === taskId);
    expect(ofTask("tasks/get").length).toBeGreaterThan(0);
    expect(ofTask("tasks/resubscribe")).toHaveLength(1);
    expect(transcript(run.messages)).toEqual([
      { role: "user", content: "drops" },
      { role: "assistant", content: WHOLE_DROPS_ANSWER },
    ]);
    expect(run.events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });
    expect(ofTask("tasks/cancel")).toEqual([]);
  });

  it("drops in pipeline mode: followed the same way, the recovery route a plain agent lacks (404) counting as nothing", async () => {
    dropped = new HeldLines("drops", -2);
    const { events } = await afterResubscribe(() => post(runInput("drops", {}, { runMode: "pipeline" })));

    expect(calls("tasks/get").length).toBeGreaterThan(0);
    expect(textOf(events)).toBe(WHOLE_DROPS_ANSWER);
    expect(events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });
  });

  it("cancel: the cancel route cancels the running task (tasks/cancel) and the run ends CANCELLED", async () => {
    const input = runInput("slow-chat");
    const opened = await openRun(
      service.url,
      input,
      (raw) => raw.includes("iac-code.session.v1") && raw.includes("TEXT_MESSAGE_CONTENT") && raw.endsWith("\n\n"),
    );
    const { executionId, taskId } = sessionOf(await parseSse(opened.raw));
    const response = await fetch(`${service.url}/extensions/iac-code/v1/executions/${executionId}/cancel`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ threadId: input.threadId, rosInvocationId: "ros-1" }),
    });
    expect(await response.json()).toMatchObject({ status: "cancelled" });
    const events = await parseSse(await opened.rest);
    await expectValidRun(events);
    expect(calls("tasks/cancel").map((call) => (call.params as { id: string }).id)).toContain(taskId);
    expect(events.at(-1)).toMatchObject({ type: EventType.RUN_ERROR, code: "CANCELLED" });
  });

  it("cancel of a task parked in input-required: tasks/cancel, and its interrupt is gone", async () => {
    const first: Input = runInput("ask-input");
    const asked = await post(first);
    const { executionId, taskId } = sessionOf(asked.events);
    const response = await fetch(`${service.url}/extensions/iac-code/v1/executions/${executionId}/cancel`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ threadId: first.threadId, rosInvocationId: "ros-1" }),
    });
    expect(await response.json()).toMatchObject({ status: "cancelled" });
    await waitFor(() => calls("tasks/cancel").some((call) => (call.params as { id: string }).id === taskId));
    const interrupt = (asked.events.at(-1) as { outcome: { interrupts: Interrupt[] } }).outcome.interrupts[0]!;
    const late = await post({
      ...first,
      runId: uniqueId("run"),
      resume: [{ interruptId: interrupt.id, status: "resolved", payload: { freeText: "Red" } }],
    });
    expect(late.events.at(-1)).toMatchObject({ type: EventType.RUN_ERROR, code: "EXECUTION_LOST" });
  });

  it("an observer of a live run follows it (tasks/get, tasks/resubscribe) to its end", async () => {
    const input = runInput("/slow-chat");
    const opened = await openRun(
      service.url,
      input,
      (raw) => raw.includes("iac-code.session.v1") && raw.includes("TEXT_MESSAGE_CONTENT") && raw.endsWith("\n\n"),
    );
    const { executionId } = sessionOf(await parseSse(opened.raw));
    const resubscribes = calls("tasks/resubscribe").length;
    const watching = postRun(`${service.url}/extensions/iac-code/v1/executions/${executionId}/subscribe`, { threadId: input.threadId });
    await waitFor(() => calls("tasks/resubscribe").length > resubscribes);
    // As for drops: the SDK joins the task's events within the turn that answers the snapshot.
    await new Promise((resolve) => setImmediate(resolve));
    observed.release();
    const [watched, own] = [await watching, await parseSse(await opened.rest)];
    await expectValidRun(watched.events);
    await expectValidRun(own);
    expect(watched.events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });
    expect(own.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });
  });

  it("a client that leaves mid-run has its task cancelled (tasks/cancel)", async () => {
    const opened = await openRun(
      service.url,
      runInput("slow-chat"),
      (raw) => raw.includes("iac-code.session.v1") && raw.includes("TEXT_MESSAGE_CONTENT") && raw.endsWith("\n\n"),
    );
    const { taskId } = sessionOf(await parseSse(opened.raw));
    opened.abort();
    await waitFor(() => calls("tasks/cancel").some((call) => (call.params as { id: string }).id === taskId));
  });
});

describe("the service in front of an A2A 1.0 agent without iac-code metadata", () => {
  let harness: Harness;
  const ids = (extra: Record<string, unknown>) => ({ taskId: "${taskId}", contextId: "${contextId}", ...extra });
  const agentText = (messageId: string, text: string) => ({ messageId, role: "ROLE_AGENT", parts: [{ text }] });
  beforeAll(async () => {
    harness = await startHarness({
      script: ({ turnIndex }) =>
        turnIndex === 0
          ? [
              script.task(),
              {
                delayMs: 0,
                frame: { statusUpdate: ids({ status: { state: "TASK_STATE_WORKING", message: agentText("m-look", "Looking. ") } }) },
              },
              { delayMs: 0, frame: { artifactUpdate: ids({ artifact: { artifactId: "a-plan", parts: [{ text: "Two " }] } }) } },
              {
                delayMs: 0,
                frame: {
                  artifactUpdate: ids({
                    append: true,
                    artifact: {
                      artifactId: "a-plan",
                      parts: [{ text: "stacks." }, { data: { stacks: 2 }, mediaType: "application/json" }],
                    },
                  }),
                },
              },
              {
                delayMs: 0,
                frame: {
                  statusUpdate: ids({ status: { state: "TASK_STATE_INPUT_REQUIRED", message: agentText("m-ask", "Which region?") } }),
                },
              },
            ]
          : [
              { delayMs: 0, frame: { statusUpdate: ids({ status: { state: "TASK_STATE_WORKING" } }) } },
              { delayMs: 0, frame: { artifactUpdate: ids({ artifact: { artifactId: "a-done", parts: [{ text: "Deployed." }] } }) } },
              { delayMs: 0, frame: { statusUpdate: ids({ status: { state: "TASK_STATE_COMPLETED" } }) } },
            ],
    });
  });
  afterAll(() => harness.close());

  it("streams status and artifact text, keeps the data part as the artifact, asks in free text, and the answer finishes the task", async () => {
    const agent = httpAgent(harness.service.url, { messages: [userMessage("plan")] });
    const forwardedProps = runInput("").forwardedProps;
    const asked = await runHttpAgent(agent, { forwardedProps });
    expect(asked.error).toBeUndefined();
    await expectValidRun(asked.events);
    expect(transcript(asked.messages).slice(1, 3)).toEqual([
      { role: "assistant", content: "Looking. " },
      { role: "assistant", content: "Two stacks." },
    ]);
    const artifact = ofType(asked.events, EventType.CUSTOM).find((event) => event.name === "iac-code.artifact.v1");
    expect(artifact?.value).toMatchObject({ artifactId: "a-plan", parts: [{ data: { stacks: 2 } }] });
    const finished = asked.events.at(-1) as { outcome: { type: string; interrupts: Interrupt[] } };
    expect(finished.outcome.type).toBe("interrupt");
    const interrupt = finished.outcome.interrupts[0]!;
    expect(interrupt.message).toBe("Which region?");

    const answered = await runHttpAgent(agent, {
      forwardedProps: { ...forwardedProps },
      resume: [{ interruptId: interrupt.id, status: "resolved", payload: { freeText: "Hangzhou" } }],
    } as never);
    expect(answered.error).toBeUndefined();
    await expectValidRun(answered.events);
    const sent = harness.kernel.received.filter((call) => call.method === "SendStreamingMessage").at(-1)!.params as {
      message: Record<string, unknown>;
    };
    expect(sent.message).toMatchObject({ role: "ROLE_USER", parts: [{ text: "Hangzhou" }] });
    expect(transcript(answered.messages).at(-1)).toEqual({ role: "assistant", content: "Deployed." });
    expect(answered.events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });
  });
});
