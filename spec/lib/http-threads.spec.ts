import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { EventType, type AGUIEvent } from "@ag-ui/core";
import { THREAD_BUSY_RETRY_AFTER_S } from "../../lib/errors.js";
import { startService } from "../../lib/server.js";
import { FileThreadStore } from "../../lib/state/file-thread-store.js";
import type { ThreadState } from "../../lib/state/thread-state.js";
import { expectValidRun } from "../support/agui.js";
import { interruptScript, permissionProjection } from "../support/interrupt-scripts.js";
import { postRun, runInput, script, startHarness, testConfig, uniqueId, waitFor, type Harness } from "../support/service.js";

type Input = ReturnType<typeof runInput>;
const allow = [{ interruptId: "perm-1", status: "resolved", payload: { decision: "allow_once" } }];
const resume = (first: Input, entries: unknown[]) => ({ ...first, runId: uniqueId("run"), resume: entries });
const sessionOf = (events: AGUIEvent[]) =>
  (
    events.find((event) => event.type === EventType.CUSTOM && event.name === "iac-code.session.v1") as {
      value: { taskId: string; executionId: string };
    }
  ).value;

describe("thread state across restarts, expiry and failures", () => {
  const permission = interruptScript("permission", permissionProjection);
  const slow = (turn: { text: string }) =>
    turn.text === "slow"
      ? [script.task(), script.status("WORKING", undefined, "..."), { delayMs: 600_000, frame: script.status("COMPLETED").frame }]
      : undefined;
  let clock = Date.now();
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness(
      { script: (turn) => permission(turn) ?? slow(turn), timeScale: 1 },
      { interruptTtlS: 60 },
      { now: () => clock },
    );
  });
  afterAll(() => harness.close());
  const post = (body: unknown, url = harness.service.url) => postRun(url, body);
  const cancelCalls = () =>
    harness.kernel.received.filter((call) => call.method === "CancelTask").map((call) => (call.params as { id: string }).id);

  it("resumes after the service was stopped and started again on the same state directory", async () => {
    const config = testConfig({ a2aUrl: harness.kernel.url, stateDir: harness.stateDir });
    const before = await startService(config);
    const first = runInput("permission");
    const { events } = await post(first, before.url);
    expect((events.at(-1) as { outcome?: { type: string } }).outcome?.type).toBe("interrupt");
    await before.close();

    const after = await startService(config);
    try {
      const { events: resumed } = await post(resume(first, allow), after.url);
      await expectValidRun(resumed);
      expect(resumed.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });
    } finally {
      await after.close();
    }
  });

  it("refuses an expired interrupt with EXECUTION_EXPIRED and cancels its task; a new message is then welcome", async () => {
    const first = runInput("permission");
    const { events } = await post(first);
    const { taskId } = sessionOf(events);
    clock += 61_000;
    const { events: expired } = await post(resume(first, allow));
    await expectValidRun(expired);
    expect(expired.at(-1)).toMatchObject({ type: EventType.RUN_ERROR, code: "EXECUTION_EXPIRED" });
    await waitFor(() => cancelCalls().includes(taskId));
    const { events: fresh } = await post({
      ...first,
      runId: uniqueId("run"),
      messages: [{ id: uniqueId("m"), role: "user", content: "chat" }],
    });
    expect(fresh.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED });
  });

  it("clears expired interrupts on a new message too, cancelling their task (R-RES-7)", async () => {
    const first = runInput("permission");
    const { taskId } = sessionOf((await post(first)).events);
    clock += 61_000;
    const { events } = await post({ ...first, runId: uniqueId("run"), messages: [{ id: uniqueId("m"), role: "user", content: "chat" }] });
    expect(events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED });
    expect(cancelCalls()).toContain(taskId);
  });

  it("admits one run per thread: concurrent requests get THREAD_BUSY", async () => {
    const threadId = uniqueId("thread");
    const abort = new AbortController();
    const running = fetch(harness.service.url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      signal: abort.signal,
      body: JSON.stringify(runInput("slow", { threadId })),
    });
    const reader = (await running).body!.getReader();
    await reader.read(); // RUN_STARTED: the run holds the thread now
    const others = await Promise.all([1, 2, 3].map(() => post(runInput("chat", { threadId }))));
    for (const other of others) {
      expect(other.status).toBe(409);
      expect(other.json).toMatchObject({ error: { code: "THREAD_BUSY" } });
    }
    // A refusal that passes with time says when to try again.
    const refused = await fetch(harness.service.url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(runInput("chat", { threadId })),
    });
    expect(refused.status).toBe(409);
    expect(refused.headers.get("retry-after")).toBe(String(THREAD_BUSY_RETRY_AFTER_S));
    abort.abort();
  });

  it("lets exactly one of several simultaneous first requests on a new thread run", async () => {
    const threadId = uniqueId("thread");
    const results = await Promise.all([1, 2, 3, 4].map(() => post(runInput("chat", { threadId }))));
    const statuses = results.map((result) => result.status).sort();
    expect(statuses.filter((status) => status === 200)).toHaveLength(1);
    expect(
      results
        .filter((result) => result.status === 409)
        .every((result) => (result.json as { error: { code: string } }).error.code === "THREAD_BUSY"),
    ).toBe(true);
  });

  it("answers 503 STATE_UNAVAILABLE for a thread whose file is corrupt, and only for that thread", async () => {
    const first = runInput("chat");
    await post(first);
    const file = new FileThreadStore({ stateDir: harness.stateDir }).fileFor(first.threadId);
    writeFileSync(file, '{"schemaVersion": 1, "threadId": ');
    const { status, json } = await post({ ...first, runId: uniqueId("run") });
    expect(status).toBe(503);
    expect(json).toMatchObject({ error: { code: "STATE_UNAVAILABLE" } });
    expect((await post(runInput("chat"))).status).toBe(200);
  });

  it("never writes credentials or conversation text to the state directory", async () => {
    const secrets = {
      llmApiKey: "sk-live-123456",
      alibabaCloud: { accessKeyId: "LTAI-id", accessKeySecret: "very-secret-ak", securityToken: "sts-token-xyz", regionId: "cn-hangzhou" },
    };
    const first = runInput("permission about my secret project Zephyr", {}, secrets);
    await post(first);
    const dir = path.join(harness.stateDir, "threads");
    const everything = readdirSync(dir)
      .map((file) => readFileSync(path.join(dir, file), "utf8"))
      .join("\n");
    for (const forbidden of ["sk-live-123456", "very-secret-ak", "sts-token-xyz", "Zephyr", "I will deploy"])
      expect(everything).not.toContain(forbidden);
  });
});

describe("a store that fails when the run pauses", () => {
  let harness: Harness;
  beforeAll(async () => {
    const config = testConfig();
    const files = new FileThreadStore({ stateDir: config.stateDir });
    const failing = {
      load: (threadId: string) => files.load(threadId),
      tryAcquire: (threadId: string) => files.tryAcquire(threadId),
      save: (state: ThreadState) =>
        Object.keys(state.execution.pending).length > 0 ? Promise.reject(new Error("disk full")) : files.save(state),
    };
    harness = await startHarness(
      { script: interruptScript("permission", permissionProjection) },
      { stateDir: config.stateDir },
      { store: failing },
    );
  });
  afterAll(() => harness.close());

  it("never announces an interrupt it could not persist: RUN_ERROR STATE_PERSISTENCE_FAILED, and the task is cancelled", async () => {
    const { events } = await postRun(harness.service.url, runInput("permission"));
    await expectValidRun(events);
    expect(events.at(-1)).toMatchObject({ type: EventType.RUN_ERROR, code: "STATE_PERSISTENCE_FAILED" });
    expect(JSON.stringify(events)).not.toContain('"interrupt"');
    const { taskId } = sessionOf(events);
    await waitFor(() =>
      harness.kernel.received.some((call) => call.method === "CancelTask" && (call.params as { id: string }).id === taskId),
    );
  });
});
