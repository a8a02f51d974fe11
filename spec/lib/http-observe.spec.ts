import { afterAll, afterEach, beforeAll, describe, expect, it } from "@jest/globals";
import { EventType, type AGUIEvent } from "@ag-ui/core";
import { expectValidRun } from "../support/agui.js";
import { interruptScript, permissionProjection } from "../support/interrupt-scripts.js";
import type { HoldLine } from "../../lib/kernel/replay-kernel.js";
import { postRun, runInput, script, startHarness, uniqueId, waitFor, type Harness } from "../support/service.js";

/** A gate a test opens: the kernel holds a line of a turn until then. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

/**
 * The "slow" turn's line `lineIndex` waits for `held`, when a test holds it:
 * the turn goes on only once the observer follows its task, so the observer
 * attaches to a running execution however loaded the machine is.
 */
const holdSlowLine =
  (lineIndex: number, held: () => ReturnType<typeof gate> | undefined): HoldLine =>
  (turn, index) =>
    turn.text === "slow" && index === lineIndex ? held()?.opened : undefined;

/** Resolves once the kernel was asked to follow `taskId`: an observer is subscribed to it. */
const followed = (harness: Harness, taskId: string) =>
  waitFor(() => harness.kernel.received.some((call) => call.method === "SubscribeToTask" && (call.params as { id: string }).id === taskId));

const sessionOf = (events: AGUIEvent[]) =>
  (
    events.find((event) => event.type === EventType.CUSTOM && event.name === "iac-code.session.v1") as {
      value: { taskId: string; executionId: string };
    }
  ).value;

describe("observers: POST /extensions/iac-code/v1/executions/{executionId}/subscribe", () => {
  let harness: Harness;
  let held: ReturnType<typeof gate> | undefined;
  const permission = interruptScript("permission", permissionProjection);
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
      script: (turn) => permission(turn) ?? slow(turn),
      holdLine: holdSlowLine(2, () => held),
      timeScale: 1,
    });
  });
  afterEach(() => {
    held?.open();
    held = undefined;
  });
  afterAll(() => harness.close());
  const observe = (executionId: string, body: unknown) =>
    postRun(`${harness.service.url}/extensions/iac-code/v1/executions/${executionId}/subscribe`, body);

  it("shows a paused execution: the session, the thread status with its interrupts, then the interrupt outcome; it never cancels", async () => {
    const first = runInput("permission");
    const { events } = await postRun(harness.service.url, first);
    const { executionId, taskId } = sessionOf(events);
    const { status, events: observed } = await observe(executionId, {
      threadId: first.threadId,
      runId: first.runId,
      rosInvocationId: "ros-1",
    });
    expect(status).toBe(200);
    await expectValidRun(observed);
    expect(observed.map((event) => event.type).slice(0, 3)).toEqual([EventType.RUN_STARTED, EventType.CUSTOM, EventType.STATE_SNAPSHOT]);
    // The run the caller named is the one it is told it watches, from RUN_STARTED to RUN_FINISHED.
    expect(observed[0]).toMatchObject({ runId: first.runId });
    expect(observed.at(-1)).toMatchObject({ runId: first.runId });
    expect((observed[2] as { snapshot: unknown }).snapshot).toMatchObject({
      threadId: first.threadId,
      runActive: false,
      pendingInterrupts: [{ id: "perm-1", kind: "permission" }],
    });
    expect(observed.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "interrupt", interrupts: [{ id: "perm-1" }] } });
    expect(harness.kernel.received.some((call) => call.method === "CancelTask" && (call.params as { id: string }).id === taskId)).toBe(
      false,
    );

    // Observing took no lease: the thread's owner resumes as usual.
    const resumed = await postRun(harness.service.url, {
      ...first,
      runId: uniqueId("run"),
      resume: [{ interruptId: "perm-1", status: "resolved", payload: { decision: "allow_once" } }],
    });
    expect(resumed.events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });
  });

  it("follows a running execution to its end beside the run, starting from the thread status as a snapshot", async () => {
    held = gate();
    const first = runInput("slow");
    const response = await fetch(harness.service.url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(first),
    });
    const reader = response.body!.getReader();
    let raw = "";
    while (!raw.includes("iac-code.session.v1")) raw += new TextDecoder().decode((await reader.read()).value);
    const { executionId, taskId } = JSON.parse(
      raw
        .split("\n")
        .find((line) => line.includes("iac-code.session.v1"))!
        .slice(6),
    ).value as { executionId: string; taskId: string };

    const observing = observe(executionId, { threadId: first.threadId });
    await followed(harness, taskId);
    held.open();
    const { events: observed } = await observing;
    await expectValidRun(observed);
    expect(
      (observed.find((event) => event.type === EventType.STATE_SNAPSHOT) as { snapshot: { runActive: boolean } }).snapshot.runActive,
    ).toBe(true);
    expect(observed.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });
    while (!(await reader.read()).done);
  });

  it.each([
    ["an unknown body key", { threadId: "t", extra: 1 }, 400, "INVALID_INPUT"],
    ["an unknown thread", { threadId: "no-such-thread" }, 404, "EXECUTION_NOT_FOUND"],
  ])("refuses %s", async (_name, body, status, code) => {
    const result = await observe("e", body);
    expect(result.status).toBe(status);
    expect(result.json).toMatchObject({ error: { code } });
  });

  it("answers 409 OBSERVATION_CONFLICT for an execution, invocation or run the thread does not know", async () => {
    const first = runInput("permission");
    const { executionId } = sessionOf((await postRun(harness.service.url, first)).events);
    for (const [id, body] of [
      ["other-execution", { threadId: first.threadId }],
      [executionId, { threadId: first.threadId, rosInvocationId: "ros-other" }],
      [executionId, { threadId: first.threadId, runId: "never-ran" }],
    ] as const) {
      const result = await observe(id, body);
      expect(result.status).toBe(409);
      expect(result.json).toMatchObject({ error: { code: "OBSERVATION_CONFLICT" } });
    }
  });
});

describe("the disconnect grace window (R-SIB-7)", () => {
  let harness: Harness;
  let held: ReturnType<typeof gate> | undefined;
  const slow = () => [
    script.task(),
    script.status("WORKING", { iacCodeSessionId: "sess-${contextId}" }, "Working. "),
    script.status("COMPLETED"),
  ];
  beforeAll(async () => {
    harness = await startHarness({ script: slow, holdLine: holdSlowLine(2, () => held), timeScale: 1 }, { disconnectGraceMs: 60_000 });
  });
  afterEach(() => {
    held?.open();
    held = undefined;
  });
  afterAll(() => harness.close());

  it("does not cancel a client that left within the window and came back as an observer, which follows the task to its end", async () => {
    held = gate();
    const first = runInput("slow");
    const abort = new AbortController();
    const response = await fetch(harness.service.url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(first),
      signal: abort.signal,
    });
    const reader = response.body!.getReader();
    let raw = "";
    while (!raw.includes("iac-code.session.v1")) raw += new TextDecoder().decode((await reader.read()).value);
    const { executionId, taskId } = JSON.parse(
      raw
        .split("\n")
        .find((line) => line.includes("iac-code.session.v1"))!
        .slice(6),
    ).value as { executionId: string; taskId: string };
    abort.abort();

    const observing = postRun(`${harness.service.url}/extensions/iac-code/v1/executions/${executionId}/subscribe`, {
      threadId: first.threadId,
    });
    await followed(harness, taskId);
    held.open();
    const observed = await observing;
    await expectValidRun(observed.events);
    expect(observed.events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });
    expect(harness.kernel.received.some((call) => call.method === "CancelTask" && (call.params as { id: string }).id === taskId)).toBe(
      false,
    );
  });
});
