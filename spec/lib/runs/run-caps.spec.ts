/**
 * IAC_CODE_AGUI_MAX_ACTIVE_RUNS and IAC_CODE_AGUI_MAX_RUNS_PER_USER through
 * the real service: a run past a cap is 429 TOO_MANY_RUNS with Retry-After
 * and the kernel never hears of it; a resume counts like a run; a slot
 * comes back when its run ends; with Redis, a user's runs are counted
 * across instances; /metrics counts the refusals.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "@jest/globals";
import { EventType, type AGUIEvent } from "@ag-ui/core";
import { startReplayKernel, type ReplayKernel, type ReplayTurn } from "../../../lib/kernel/replay-kernel.js";
import { startService, type RunningService } from "../../../lib/server.js";
import { redisServerAvailable, startRedisServer, type RedisServer } from "../../../lib/testing/redis-server.js";
import { expectValidRun } from "../../support/agui.js";
import { interruptScript, permissionProjection } from "../../support/interrupt-scripts.js";
import { openRun, parseSse } from "../../support/service-process.js";
import { postRun, runInput, script, startHarness, testConfig, uniqueId, type Harness } from "../../support/service.js";

/** A run the test holds open: its task's last line waits until the test lets it go. */
const HELD = "held-run";

function holdingKernelOptions() {
  let release!: () => void;
  let held = new Promise<void>((resolve) => (release = resolve));
  const permission = interruptScript("permission", permissionProjection);
  return {
    options: {
      script: (turn: ReplayTurn) =>
        turn.text === HELD
          ? [script.task(), script.status("WORKING", undefined, "Working on it."), script.status("COMPLETED")]
          : permission(turn),
      holdLine: (turn: ReplayTurn, index: number, count: number) => (turn.text === HELD && index === count - 1 ? held : undefined),
    },
    /** Lets every held run end, and holds the next ones again. */
    releaseHeld: () => {
      release();
      held = new Promise<void>((resolve) => (release = resolve));
    },
  };
}

const asUser = (userId: string | undefined) => (userId === undefined ? {} : { userId });

/** Opens a held run and reads it until it has started: it holds its slot from now until the test lets it end. */
async function openHeld(url: string, userId?: string) {
  const run = await openRun(url, runInput(HELD, {}, asUser(userId)), (raw) => raw.includes("Working on it."));
  return { rest: async (): Promise<AGUIEvent[]> => parseSse(await run.rest) };
}

/** A run request read as a refusal: its status, Retry-After and body. */
async function postRefusable(url: string, body: unknown) {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "text/event-stream" },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  return {
    status: response.status,
    retryAfter: response.headers.get("retry-after"),
    json: response.headers.get("content-type")?.startsWith("application/json") ? (JSON.parse(text) as unknown) : undefined,
  };
}

/**
 * Posts `makeInput()` until it is not refused: a slot is given back as its run's connection closes, a moment after
 * the client read the last event (and, with Redis, once the removal reached it). Returns the accepted run.
 */
async function postOnceSlotFree(url: string, makeInput: () => unknown) {
  for (let attempt = 0; ; attempt++) {
    const result = await postRun(url, makeInput());
    if (result.status !== 429 || attempt >= 400) return result;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const sentMessages = (kernel: ReplayKernel) => kernel.received.filter((call) => call.method === "SendStreamingMessage").length;

async function refusals(url: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return Object.fromEntries(
    [...text.matchAll(/^iac_code_agui_runs_refused_total\{limit="(\w+)"\} (\d+)$/gm)].map((m) => [m[1], Number(m[2])]),
  );
}

describe("IAC_CODE_AGUI_MAX_ACTIVE_RUNS", () => {
  const kernel = holdingKernelOptions();
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness(kernel.options, { maxActiveRuns: 1 });
  });
  afterEach(() => kernel.releaseHeld());
  afterAll(() => harness.close());

  it("refuses a run past the cap with 429 TOO_MANY_RUNS and Retry-After, before the kernel is called, and takes one once a slot is free", async () => {
    const { url } = harness.service;
    const held = await openHeld(url);
    const before = sentMessages(harness.kernel);

    const refused = await postRefusable(url, runInput("chat"));
    expect(refused).toEqual({
      status: 429,
      retryAfter: "5",
      json: { error: { code: "TOO_MANY_RUNS", message: expect.stringMatching(/\(1\)/), limit: "instance" } },
    });
    expect(sentMessages(harness.kernel)).toBe(before);
    expect(await refusals(url)).toEqual({ instance: 1 });

    kernel.releaseHeld();
    const heldEvents = await held.rest();
    await expectValidRun(heldEvents);
    expect(heldEvents.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED });

    const { status, events } = await postOnceSlotFree(url, () => runInput("chat"));
    expect(status).toBe(200);
    await expectValidRun(events);
    expect(events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED });
  });

  it("counts a resume of a paused run like a run", async () => {
    const { url } = harness.service;
    const first = runInput("permission");
    const paused = await postRun(url, first);
    expect(paused.events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "interrupt" } });

    const held = await openHeld(url);
    const resume = {
      ...first,
      runId: uniqueId("run"),
      resume: [{ interruptId: "perm-1", status: "resolved", payload: { decision: "allow_once" } }],
    };
    const before = sentMessages(harness.kernel);
    expect(await postRefusable(url, resume)).toMatchObject({ status: 429, json: { error: { code: "TOO_MANY_RUNS" } } });
    expect(sentMessages(harness.kernel)).toBe(before);

    kernel.releaseHeld();
    await held.rest();
    const resumed = await postOnceSlotFree(url, () => resume);
    await expectValidRun(resumed.events);
    expect(resumed.events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });
  });
});

describe("IAC_CODE_AGUI_MAX_RUNS_PER_USER in one instance", () => {
  const kernel = holdingKernelOptions();
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness(kernel.options, { maxRunsPerUser: 1 });
  });
  afterEach(() => kernel.releaseHeld());
  afterAll(() => harness.close());

  it("refuses a user's second run, not another user's, nor a run without a user id", async () => {
    const { url } = harness.service;
    const held = await openHeld(url, "alice");
    const before = sentMessages(harness.kernel);
    expect(await postRefusable(url, runInput("chat", {}, { userId: "alice" }))).toEqual({
      status: 429,
      retryAfter: "5",
      json: { error: { code: "TOO_MANY_RUNS", message: expect.stringMatching(/\(1\)/), limit: "user" } },
    });
    expect(sentMessages(harness.kernel)).toBe(before);
    expect((await postRun(url, runInput("chat", {}, { userId: "bob" }))).status).toBe(200);
    expect((await postRun(url, runInput("chat"))).status).toBe(200);
    expect(await refusals(url)).toEqual({ user: 1 });
    kernel.releaseHeld();
    await held.rest();
    expect((await postOnceSlotFree(url, () => runInput("chat", {}, { userId: "alice" }))).status).toBe(200);
  });
});

(redisServerAvailable() ? describe : describe.skip)("IAC_CODE_AGUI_MAX_RUNS_PER_USER across instances on one Redis", () => {
  const kernelControl = holdingKernelOptions();
  let redis: RedisServer;
  let kernel: ReplayKernel;
  const services: RunningService[] = [];
  beforeAll(async () => {
    redis = await startRedisServer();
    kernel = await startReplayKernel({ timeScale: 0, ...kernelControl.options });
    for (let i = 0; i < 2; i++) {
      services.push(await startService(testConfig({ a2aUrl: kernel.url, redisUrl: redis.url, maxRunsPerUser: 1 })));
    }
  });
  afterEach(() => kernelControl.releaseHeld());
  afterAll(async () => {
    for (const service of services) await service.close();
    await kernel?.close();
    await redis?.stop();
  });

  it("refuses on one instance a user whose run goes on another, and takes the user again once it ended", async () => {
    const [a, b] = services as [RunningService, RunningService];
    const held = await openHeld(a.url, "carol");
    const before = sentMessages(kernel);
    expect(await postRefusable(b.url, runInput("chat", {}, { userId: "carol" }))).toMatchObject({
      status: 429,
      retryAfter: "5",
      json: { error: { code: "TOO_MANY_RUNS", limit: "user" } },
    });
    expect(sentMessages(kernel)).toBe(before);
    expect(await refusals(b.url)).toEqual({ user: 1 });
    expect((await postRun(b.url, runInput("chat", {}, { userId: "dave" }))).status).toBe(200);

    kernelControl.releaseHeld();
    await held.rest();
    expect((await postOnceSlotFree(b.url, () => runInput("chat", {}, { userId: "carol" }))).status).toBe(200);
  });

  it("refuses a user's run with 503 STATE_UNAVAILABLE while Redis does not answer, before the kernel is called", async () => {
    await redis.stop();
    const before = sentMessages(kernel);
    expect(await postRefusable(services[0]!.url, runInput("chat", {}, { userId: "erin" }))).toMatchObject({
      status: 503,
      json: { error: { code: "STATE_UNAVAILABLE" } },
    });
    expect(sentMessages(kernel)).toBe(before);
  });
});
