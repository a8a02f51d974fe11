/**
 * Redis gone at the very end of a run: every write the run made before is
 * stored, and only its end cannot be. The run must not be told as a
 * success (the operations guide promises RUN_ERROR
 * STATE_PERSISTENCE_FAILED); the thread is left as a crashed instance
 * leaves it, and once Redis is back and the run's lease has run out, the
 * next message on the thread is served as ever.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { EventType, type AGUIEvent } from "@ag-ui/core";
import { contextIdFor } from "../../lib/a2a/request-mapping.js";
import { connectRedis, type RedisConnection } from "../../lib/state/redis-connection.js";
import { RedisThreadStore } from "../../lib/state/redis-thread-store.js";
import { startRedisServer, type RedisServer } from "../../lib/testing/redis-server.js";
import { expectValidRun } from "../support/agui.js";
import { httpAgent, runHttpAgent, transcript, userMessage } from "../support/http-agent.js";
import { postRun, runInput, startHarness, uniqueId, type Harness } from "../support/service.js";

/** Short, so the lease a failed release leaves behind runs out soon after Redis is back. */
const LEASE_TTL_MS = 600;

let redis: RedisServer;
let harness: Harness;
let connection: RedisConnection;
let store: RedisThreadStore;
/** The held turn's context, and what it waits on. */
let heldContext: string | undefined;
let reachedHold: () => void = () => undefined;
let releaseHold: () => void = () => undefined;

/** Polls for a state the service reaches by itself (Redis reconnected, a lease expired); the test's timeout fails it otherwise. */
async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((resolve) => setTimeout(resolve, 25));
}

/** A thread's stored state, once the test's own connection is back (it reconnects by itself, maybe after the service's). */
async function loadOnceBack(threadId: string) {
  for (;;) {
    try {
      return await store.load(threadId);
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
}

beforeAll(async () => {
  redis = await startRedisServer();
  harness = await startHarness(
    {
      // The last line of the held turn (its completed status) waits for the test.
      holdLine: (turn, index, count) => {
        if (turn.contextId !== heldContext || index !== count - 1) return undefined;
        reachedHold();
        return new Promise<void>((resolve) => (releaseHold = resolve));
      },
    },
    { redisUrl: redis.url, leaseTtlMs: LEASE_TTL_MS },
  );
  connection = await connectRedis(redis.url);
  store = new RedisThreadStore({ client: connection.client });
}, 30_000);

afterAll(async () => {
  releaseHold();
  await harness?.close();
  await connection?.close();
  await redis?.stop();
});

describe("Redis down when a run ends", () => {
  it("ends the run with RUN_ERROR STATE_PERSISTENCE_FAILED, and the thread takes its next message once Redis is back", async () => {
    const threadId = uniqueId("thread");
    heldContext = contextIdFor(threadId);
    const atHold = new Promise<void>((resolve) => (reachedHold = resolve));
    const agent = httpAgent(harness.service.url, { threadId, messages: [userMessage("chat")] });
    const running = runHttpAgent(agent, { runId: uniqueId("run"), forwardedProps: runInput("chat").forwardedProps });

    // A run refused at once never reaches the hold: the test says why instead of timing out.
    await Promise.race([atHold, running.then((early) => Promise.reject(new Error(`the run ended early: ${String(early.error)}`)))]);
    // Everything before the end is stored: the task and the session are written once their lines are through.
    await until(async () => {
      const stored = await store.load(threadId);
      return stored?.execution.taskId != null && stored.iacCodeSessionId !== null;
    });
    await redis.halt();
    let run;
    try {
      // Only this turn is held; the thread's next one plays through.
      heldContext = undefined;
      releaseHold();
      run = await running;
    } finally {
      await redis.restart();
    }

    await expectValidRun(run.events);
    expect(run.events.at(-1)).toMatchObject({ type: EventType.RUN_ERROR, code: "STATE_PERSISTENCE_FAILED" });
    expect(run.events.some((event) => event.type === EventType.RUN_FINISHED)).toBe(false);
    // The chat keeps what the kernel said; the run ended in error, not finished.
    expect(transcript(run.messages)).toEqual([
      { role: "user", content: "chat" },
      { role: "assistant", content: expect.stringContaining("demo kernel") },
    ]);

    // The stored thread is as a crashed instance leaves it: the execution with its task, never ended.
    await until(async () => (await fetch(`${harness.service.url}/ready`)).status === 200);
    const left = await loadOnceBack(threadId);
    expect(left?.execution.taskId).not.toBeNull();
    expect(left?.terminalExecutionIds).not.toContain(left?.execution.executionId);

    // Once the lease the run could not give back has run out, the next message is served as ever.
    const seen = new Set<string>();
    let next: AGUIEvent[] = [];
    await until(async () => {
      const result = await postRun(harness.service.url, runInput("chat", { threadId }));
      next = result.events;
      const code = (result.json as { error?: { code: string } } | undefined)?.error?.code;
      if (code) seen.add(code);
      return code === undefined;
    });
    // Refused only while the old lease lived (or the connection was still coming back), never for anything else.
    for (const code of seen) expect(["THREAD_BUSY", "STATE_UNAVAILABLE"]).toContain(code);
    await expectValidRun(next);
    expect(next.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });
    const after = await store.load(threadId);
    expect(after?.terminalExecutionIds).toContain(left?.execution.executionId);
  }, 60_000);
});
