/**
 * Reload, reconnect, stop-and-resend (issue 12, "Real clients"), as the
 * user's client lives them: a page reloaded while interrupts wait, a page
 * that attaches to its thread with nothing but the thread id, and a user
 * who presses Stop and sends again at once. The assertions are on what
 * @ag-ui/client's HttpAgent ends with (its `messages`, its
 * `pendingInterrupts`), besides the events.
 */
import os from "node:os";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "@jest/globals";
import { EventType, type AGUIEvent, type Interrupt } from "@ag-ui/core";
import { STOP_RESEND_WAIT_MS } from "../../lib/runs/leaving-runs.js";
import { expectValidRun } from "../support/agui.js";
import { connectHttpAgent, connectingAgent, httpAgent, runHttpAgent, transcript, userMessage } from "../support/http-agent.js";
import { postRun, runInput, script, startHarness, uniqueId, waitFor, type Harness } from "../support/service.js";

const forwardedProps = { iacCode: { schemaVersion: 1, rosInvocationId: "ros-1", cwd: os.tmpdir() } };
const PERMISSION_ASKED =
  "I'll deploy the stack `demo-vpc-ecs` to cn-hangzhou with the validated template: one VPC, a vSwitch and two ECS instances.";

const interruptsOf = (events: readonly AGUIEvent[]): Interrupt[] => {
  const finished = events.at(-1) as { type: string; outcome?: { type: string; interrupts?: Interrupt[] } };
  expect(finished).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "interrupt" } });
  return finished.outcome!.interrupts!;
};

/** The status read-model as the stream's STATE_SNAPSHOT and STATE_DELTAs leave it. */
function statusAtTheEnd(events: readonly AGUIEvent[]): Record<string, unknown> {
  let status: Record<string, unknown> = {};
  for (const event of events) {
    if (event.type === EventType.STATE_SNAPSHOT) status = { ...(event.snapshot as Record<string, unknown>) };
    if (event.type === EventType.STATE_DELTA) {
      for (const op of event.delta as Array<{ op: string; path: string; value?: unknown }>) {
        const key = op.path.slice(1);
        if (op.op === "remove") delete status[key];
        else status[key] = op.value;
      }
    }
  }
  return status;
}

describe("a reloaded page", () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness();
  });
  afterAll(() => harness.close());
  const connectUrl = (threadId: string) => `${harness.service.url}/extensions/iac-code/v1/threads/${encodeURIComponent(threadId)}/connect`;

  it("sending a new message while interrupts wait is 409 RESUME_REQUIRED naming them, as RUN_FINISHED did", async () => {
    const first = runInput("permission", { forwardedProps: { iacCode: { ...forwardedProps.iacCode, preferredLanguage: "ja" } } });
    const paused = await postRun(harness.service.url, first);
    const interrupts = interruptsOf(paused.events);

    const next = runInput("hello again", { threadId: first.threadId, forwardedProps: first.forwardedProps });
    const { status, json } = await postRun(harness.service.url, next);
    expect(status).toBe(409);
    expect(json).toEqual({ error: { code: "RESUME_REQUIRED", message: expect.any(String), interrupts } });
  });

  it("attaches with its thread id alone: the HttpAgent ends with the conversation and the pending interrupts, and answers them", async () => {
    const live = httpAgent(harness.service.url, { messages: [userMessage("permission")] });
    const asked = await runHttpAgent(live, { runId: uniqueId("run"), forwardedProps });
    expect(asked.error).toBeUndefined();

    // The page reloads: a new agent on the same thread, with no messages.
    const reloaded = connectingAgent(harness.service.url, connectUrl(live.threadId), { threadId: live.threadId });
    const attached = await connectHttpAgent(reloaded);
    expect(attached.error).toBeUndefined();
    await expectValidRun(attached.events);
    // The tool call the permission waits on is shown, in the message the live run showed it in.
    const deployCall = { id: "toolu_deploy_1", name: "ros_deploy_stack", arguments: expect.stringContaining('"stackName":"demo-vpc-ecs"') };
    expect(transcript(attached.messages)).toEqual([
      { role: "user", content: "permission" },
      { role: "assistant", content: PERMISSION_ASKED, toolCalls: [deployCall] },
    ]);
    // What the live page had, under its ids (the user's own, and the paused run's): a page that kept them merges, never doubles.
    expect(attached.messages).toEqual(live.messages);
    expect(reloaded.pendingInterrupts).toEqual(live.pendingInterrupts);
    expect(reloaded.pendingInterrupts).toHaveLength(1);

    const [interrupt] = reloaded.pendingInterrupts;
    const answered = await runHttpAgent(reloaded, {
      runId: uniqueId("run"),
      forwardedProps,
      resume: [{ interruptId: interrupt!.id, status: "resolved", payload: { decision: "allow_once" } }],
    });
    expect(answered.error).toBeUndefined();
    expect(answered.events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });
    expect(transcript(reloaded.messages)).toEqual([
      { role: "user", content: "permission" },
      { role: "assistant", content: PERMISSION_ASKED, toolCalls: [deployCall] },
      { role: "tool", toolCallId: "toolu_deploy_1", content: expect.stringContaining("CREATE_COMPLETE") },
      { role: "assistant", content: expect.stringMatching(/^The stack `demo-vpc-ecs` is deployed/) },
    ]);
  });

  it("attaches to a finished conversation of several turns: the text of every turn, as the live page showed it", async () => {
    const live = httpAgent(harness.service.url, { messages: [userMessage("chat")] });
    expect((await runHttpAgent(live, { runId: uniqueId("run"), forwardedProps })).error).toBeUndefined();
    live.messages.push(userMessage("whole-text"));
    expect((await runHttpAgent(live, { runId: uniqueId("run"), forwardedProps })).error).toBeUndefined();

    const reloaded = connectingAgent(harness.service.url, connectUrl(live.threadId), { threadId: live.threadId });
    const attached = await connectHttpAgent(reloaded);
    expect(attached.error).toBeUndefined();
    await expectValidRun(attached.events);
    expect(transcript(attached.messages)).toEqual(transcript(live.messages));
    const ids = attached.messages.map((message) => message.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(attached.messages.filter((message) => message.role === "user").map((message) => message.id)).toEqual(
      live.messages.filter((message) => message.role === "user").map((message) => message.id),
    );
    expect(reloaded.pendingInterrupts).toEqual([]);
    expect(statusAtTheEnd(attached.events)).toMatchObject({ runActive: false, pendingInterrupts: [] });
  });

  it("attaches to a thread that never ran: an empty conversation, no error", async () => {
    const threadId = uniqueId("thread");
    const reloaded = connectingAgent(harness.service.url, connectUrl(threadId), { threadId });
    const attached = await connectHttpAgent(reloaded);
    expect(attached.error).toBeUndefined();
    await expectValidRun(attached.events);
    expect(attached.messages).toEqual([]);
    expect(reloaded.pendingInterrupts).toEqual([]);
  });

  it("refuses a body that names another thread, and a path that names no thread", async () => {
    const base = `${harness.service.url}/extensions/iac-code/v1/threads`;
    for (const [url, body] of [
      [connectUrl("thread-a"), { threadId: "thread-b" }],
      [`${base}/${"x".repeat(257)}/connect`, {}],
      // A lone surrogate, and an escape cut short.
      [`${base}/%ED%A0%80/connect`, {}],
      [`${base}/%E0%A4%A/connect`, {}],
    ] as const) {
      const result = await postRun(url, body);
      expect(result.status).toBe(400);
      expect(result.json).toMatchObject({ error: { code: "INVALID_INPUT" } });
    }
  });
});

describe("attaching to a run that is streaming", () => {
  let harness: Harness;
  // The second part waits until the test lets it go: the attach comes between the two parts however busy the machine is.
  let releaseSecondPart = () => {};
  let secondPartHeld = Promise.resolve();
  const holdSecondPart = () => {
    secondPartHeld = new Promise<void>((resolve) => (releaseSecondPart = resolve));
  };
  const slow = (turn: { text: string }) =>
    turn.text === "slow"
      ? [
          script.task(),
          script.status("WORKING", { iacCodeSessionId: "sess-${contextId}" }, "First part. "),
          script.status("WORKING", undefined, "Second part."),
          script.status("COMPLETED"),
        ]
      : undefined;
  beforeAll(async () => {
    harness = await startHarness({
      script: slow,
      holdLine: (turn, index) => (turn.text === "slow" && index === 2 ? secondPartHeld : undefined),
    });
  });
  beforeEach(holdSecondPart);
  afterEach(() => releaseSecondPart());
  afterAll(() => harness.close());

  /** Lets the second part go once the attached client follows the task live: it read the conversation before that. */
  async function releaseOnceFollowed(follows: number): Promise<void> {
    await waitFor(() => harness.kernel.received.filter((call) => call.method === "SubscribeToTask").length > follows, 10_000);
    releaseSecondPart();
  }
  const follows = () => harness.kernel.received.filter((call) => call.method === "SubscribeToTask").length;

  /** Starts a run and reads its stream until the session event; the rest is read by `rest`. */
  async function startSlowRun(input = runInput("slow")) {
    const response = await fetch(harness.service.url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(input),
    });
    const reader = response.body!.getReader();
    let raw = "";
    while (!raw.includes("iac-code.session.v1")) raw += new TextDecoder().decode((await reader.read()).value);
    const session = JSON.parse(
      raw
        .split("\n")
        .find((line) => line.includes("iac-code.session.v1"))!
        .slice(6),
    ).value as { executionId: string };
    return {
      input,
      session,
      async rest() {
        while (!(await reader.read()).done);
      },
    };
  }

  it("a reconnecting HttpAgent follows it to its end and ends with the whole answer; its stream ends saying no run is active", async () => {
    const run = await startSlowRun();
    const { threadId } = run.input;
    const url = `${harness.service.url}/extensions/iac-code/v1/threads/${encodeURIComponent(threadId)}/connect`;
    const reloaded = connectingAgent(harness.service.url, url, { threadId });
    const followed = follows();
    const attaching = connectHttpAgent(reloaded);
    await releaseOnceFollowed(followed);
    const attached = await attaching;
    await run.rest();
    expect(attached.error).toBeUndefined();
    await expectValidRun(attached.events);

    const types = attached.events.map((event) => event.type);
    expect(types.indexOf(EventType.MESSAGES_SNAPSHOT)).toBeGreaterThan(types.indexOf(EventType.STATE_SNAPSHOT));
    expect((attached.events.find((event) => event.type === EventType.STATE_SNAPSHOT) as { snapshot: unknown }).snapshot).toMatchObject({
      runActive: true,
    });
    expect(attached.events.at(-2)).toMatchObject({ type: EventType.STATE_DELTA });
    expect(statusAtTheEnd(attached.events)).toMatchObject({ runActive: false });
    expect(transcript(attached.messages)).toEqual([
      { role: "user", content: "slow" },
      { role: "assistant", content: "First part. Second part." },
    ]);
  });

  it("an observer gets the conversation after the status snapshot, and its stream ends saying no run is active", async () => {
    const run = await startSlowRun();
    const followed = follows();
    const observing = postRun(`${harness.service.url}/extensions/iac-code/v1/executions/${run.session.executionId}/subscribe`, {
      threadId: run.input.threadId,
    });
    await releaseOnceFollowed(followed);
    const observed = await observing;
    await run.rest();
    await expectValidRun(observed.events);
    expect(observed.events.map((event) => event.type).slice(0, 4)).toEqual([
      EventType.RUN_STARTED,
      EventType.CUSTOM,
      EventType.STATE_SNAPSHOT,
      EventType.MESSAGES_SNAPSHOT,
    ]);
    expect((observed.events[3] as { messages: unknown }).messages).toEqual([
      { id: run.input.messages[0]!.id, role: "user", content: "slow" },
      { id: expect.any(String), role: "assistant", content: "First part. " },
    ]);
    expect(observed.events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });
    expect(observed.events.at(-2)).toMatchObject({ type: EventType.STATE_DELTA });
    expect(statusAtTheEnd(observed.events)).toMatchObject({ runActive: false, currentSteps: [] });
  });
});

describe("stop, then send again at once", () => {
  let harness: Harness;
  // A run that goes on for a minute unless it is stopped; anything else answers at once.
  const long = (turn: { text: string }) =>
    turn.text === "long"
      ? [
          script.task(),
          script.status("WORKING", { iacCodeSessionId: "sess-${contextId}" }, "Working on it. "),
          { delayMs: 60_000, frame: script.status("COMPLETED").frame },
        ]
      : [script.task(), script.status("WORKING", undefined, "Done."), script.status("COMPLETED")];
  beforeAll(async () => {
    harness = await startHarness({ script: long, timeScale: 1 });
  });
  afterAll(() => harness.close());

  async function streamUntilSession(input: ReturnType<typeof runInput>, signal?: AbortSignal) {
    const response = await fetch(harness.service.url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(input),
      signal,
    });
    const reader = response.body!.getReader();
    let raw = "";
    while (!raw.includes("iac-code.session.v1")) raw += new TextDecoder().decode((await reader.read()).value);
    return reader;
  }

  it("the new message is admitted: the stopped run's end is waited for, and the new run answers", async () => {
    const first = runInput("long");
    const stop = new AbortController();
    await streamUntilSession(first, stop.signal);
    stop.abort();

    const again = await postRun(harness.service.url, runInput("again", { threadId: first.threadId }));
    expect(again.json).toBeUndefined();
    expect(again.status).toBe(200);
    await expectValidRun(again.events);
    expect(again.events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });
  });

  it("a thread whose run is live still gets THREAD_BUSY at once", async () => {
    const first = runInput("long");
    const stop = new AbortController();
    const reader = await streamUntilSession(first, stop.signal);
    const started = Date.now();
    const busy = await postRun(harness.service.url, runInput("again", { threadId: first.threadId }));
    const took = Date.now() - started;
    expect(busy.status).toBe(409);
    expect(busy.json).toMatchObject({ error: { code: "THREAD_BUSY" } });
    // Had it waited, it would have waited the whole bound: the live run does not end.
    expect(took).toBeLessThan(STOP_RESEND_WAIT_MS);
    stop.abort();
    await reader.cancel().catch(() => undefined);
  });
});
