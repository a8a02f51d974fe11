/**
 * The thread status shared over Redis: two hubs on one real redis-server,
 * each with its own connections, as two instances have.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "@jest/globals";
import { randomUUID } from "node:crypto";
import { EventType, type AGUIEvent } from "@ag-ui/core";
import { createClient } from "redis";
import { firstValueFrom, type Subscription } from "rxjs";
import { initialThreadStatus, type ThreadStatus } from "../../../lib/model/thread-status.js";
import type { RedisScripting } from "../../../lib/threads/redis-scripting.js";
import { RedisThreadStatusHub } from "../../../lib/threads/status-hub-redis.js";
import { connectRedis } from "../../../lib/state/redis-connection.js";
import { startRedisServer, type RedisServer } from "../../../lib/testing/redis-server.js";

type Client = ReturnType<typeof createClient>;

const started = (threadId: string, runId = "run-1"): AGUIEvent => ({ type: EventType.RUN_STARTED, threadId, runId });
const pipelineAt = (sequence: number): AGUIEvent => ({
  type: EventType.CUSTOM,
  name: "iac-code.pipeline.v1",
  value: { sequence, eventType: "step" },
});
const finished = (threadId: string): AGUIEvent => ({ type: EventType.RUN_FINISHED, threadId, runId: "run-1" });

/** Waits, a turn of the event loop at a time, for what Redis sends back. */
async function until(condition: () => boolean, timeoutMs = 4000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("not seen in time");
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe("RedisThreadStatusHub", () => {
  let server: RedisServer;
  const clients: Client[] = [];
  const watching: Subscription[] = [];
  const closing: Array<{ close(): Promise<unknown> }> = [];
  const connect = async () => {
    const client = createClient({ url: server.url });
    // The restart spec stops the server under every connection.
    client.on("error", () => undefined);
    await client.connect();
    clients.push(client);
    return client;
  };
  /** A hub as one instance has it; `redis` may wrap its command connection. */
  const hub = async (wrap: (redis: RedisScripting) => RedisScripting = (redis) => redis) =>
    new RedisThreadStatusHub({ redis: wrap(await connect()), channels: await connect(), prefix: "spec:" });
  /** Resolves once the shared key holds a status that passes `check`: the hub writes without being awaited. */
  const storedStatus = async (threadId: string, check: (status: ThreadStatus) => boolean) => {
    const reader = await connect();
    const deadline = Date.now() + 4000;
    while (Date.now() < deadline) {
      const value = await reader.get(`spec:status:${threadId}`);
      if (value && check(JSON.parse(value.slice(value.indexOf(" ") + 1)) as ThreadStatus)) return;
    }
    throw new Error("the status was not stored in time");
  };

  beforeAll(async () => {
    server = await startRedisServer();
  });
  afterEach(() => {
    watching.splice(0).forEach((subscription) => subscription.unsubscribe());
  });
  afterAll(async () => {
    await Promise.allSettled([...clients.map((client) => client.close()), ...closing.map((connection) => connection.close())]);
    await server.stop();
  });

  it("shows a watcher on one instance the run another instance feeds, in order, to its end", async () => {
    const [a, b] = [await hub(), await hub()];
    const threadId = `thread-${randomUUID()}`;
    const seen: ThreadStatus[] = [];
    watching.push(b.watch(threadId, () => initialThreadStatus(threadId)).subscribe((status) => seen.push(status)));
    await until(() => seen.length === 1);
    a.record(threadId, started(threadId));
    for (let sequence = 1; sequence <= 50; sequence += 1) a.record(threadId, pipelineAt(sequence));
    a.record(threadId, finished(threadId));
    await until(() => seen.length === 53);

    expect(seen[0]).toMatchObject({ runActive: false, runId: null });
    expect(seen.slice(1).map((status) => status.pipeline.sequence)).toEqual([
      0,
      ...Array.from({ length: 50 }, (_, index) => index + 1),
      50,
    ]);
    expect(seen.slice(1, -1).every((status) => status.runActive)).toBe(true);
    expect(seen.at(-1)).toMatchObject({ runActive: false, runId: "run-1", pipeline: { sequence: 50 } });
  });

  it("drops what its snapshot covers and loses nothing published between its subscription and its snapshot", async () => {
    const a = await hub();
    let releaseSnapshot!: () => void;
    const snapshotHeld = new Promise<void>((resolve) => (releaseSnapshot = resolve));
    let snapshotAsked!: () => void;
    const asked = new Promise<void>((resolve) => (snapshotAsked = resolve));
    // Instance B reads its snapshot only when the test says so: the channel is joined by then.
    const b = await hub((redis) => ({
      eval: async (script, options) => {
        if (script.includes("'GET'") && !script.includes("PUBLISH")) {
          snapshotAsked();
          await snapshotHeld;
        }
        return redis.eval(script, options);
      },
    }));
    const threadId = `thread-${randomUUID()}`;
    a.record(threadId, started(threadId));
    a.record(threadId, pipelineAt(1));
    await storedStatus(threadId, (status) => status.pipeline.sequence === 1);

    const seen: ThreadStatus[] = [];
    watching.push(b.watch(threadId, () => initialThreadStatus(threadId)).subscribe((status) => seen.push(status)));
    await asked;
    // Published while B has joined the channel but not read the key: B's snapshot will cover them.
    a.record(threadId, pipelineAt(2));
    a.record(threadId, pipelineAt(3));
    await storedStatus(threadId, (status) => status.pipeline.sequence === 3);
    releaseSnapshot();
    await until(() => seen.length >= 1);
    a.record(threadId, pipelineAt(4));
    await until(() => seen.at(-1)?.pipeline.sequence === 4);

    expect(seen.map((status) => status.pipeline.sequence)).toEqual([3, 4]);
  });

  it("keeps nothing of a thread whose run ended once its watchers left", async () => {
    const [a, b] = [await hub(), await hub()];
    const threadId = `thread-${randomUUID()}`;
    const seen: ThreadStatus[] = [];
    const watcher = b.watch(threadId, () => initialThreadStatus(threadId)).subscribe((status) => seen.push(status));
    await until(() => seen.length === 1);
    a.record(threadId, started(threadId));
    a.record(threadId, finished(threadId));
    await until(() => seen.length === 3);
    watcher.unsubscribe();

    const reader = await connect();
    expect(await reader.exists(`spec:status:${threadId}`)).toBe(0);
    expect(a.size).toBe(0);
    expect(b.size).toBe(0);
  });

  it("costs a run nothing and shows the stored state's status while Redis cannot be reached", async () => {
    // As the service connects: commands fail at once while Redis is away (state/redis-connection.ts).
    const down = await connectRedis("redis://127.0.0.1:1/0", { startWaitMs: 10 });
    closing.push(down);
    const channels = down.client.duplicate();
    channels.on("error", () => undefined);
    // Never connected: a subscription there waits for good, so only the snapshot's deadline ends the wait.
    const unreachable = new RedisThreadStatusHub({ redis: down.client, channels, prefix: "spec:", snapshotTimeoutMs: 100 });
    const threadId = `thread-${randomUUID()}`;
    expect(() => unreachable.record(threadId, started(threadId))).not.toThrow();
    const seed = initialThreadStatus(threadId);
    expect(await firstValueFrom(unreachable.watch(threadId, () => seed))).toEqual(seed);
  });

  it("starts a watcher from the stored state's status when no run feeds one", async () => {
    const b = await hub();
    const threadId = `thread-${randomUUID()}`;
    const seed = { ...initialThreadStatus(threadId), pendingInterrupts: [{ id: "perm-1", reason: "tool_call", kind: "permission" }] };
    expect(await firstValueFrom(b.watch(threadId, () => seed))).toEqual(seed);
  });

  it("starts a run nobody holds a status for from its seed: a resumed run goes on from the graph its pause kept", async () => {
    const [a, b] = [await hub(), await hub()];
    const threadId = `thread-${randomUUID()}`;
    const pausedGraph = { pipelineRunId: "prun-1", name: "ros-stack-deploy", status: "running" as const, steps: [] };
    const seed = { ...initialThreadStatus(threadId), pipelineGraph: pausedGraph };
    a.record(threadId, started(threadId, "run-2"), () => seed);
    await storedStatus(threadId, (status) => status.runId === "run-2");
    const shown = await firstValueFrom(b.watch(threadId, () => initialThreadStatus(threadId)));
    expect(shown).toMatchObject({ runActive: true, runId: "run-2", pipelineGraph: pausedGraph });
  });

  it("goes on showing a run's status after Redis restarted under its watcher", async () => {
    // Connected as the service connects (state/redis-connection.ts), channels on a duplicate as `shared-threads-redis.ts` has them.
    const instance = async () => {
      const connection = await connectRedis(server.url);
      closing.push(connection);
      const channels = connection.client.duplicate();
      channels.on("error", () => undefined);
      await channels.connect();
      closing.push(channels);
      return new RedisThreadStatusHub({ redis: connection.client, channels, prefix: "spec:" });
    };
    const [a, b] = [await instance(), await instance()];
    const threadId = `thread-${randomUUID()}`;
    const seen: ThreadStatus[] = [];
    watching.push(b.watch(threadId, () => initialThreadStatus(threadId)).subscribe((status) => seen.push(status)));
    await until(() => seen.length === 1);

    await server.halt();
    await server.restart();
    // Each status carries the whole read-model: the first one after the outage brings the watcher up to date.
    await until(() => {
      a.record(threadId, started(threadId));
      return seen.at(-1)?.runActive === true;
    }, 10_000);
    expect(seen.at(-1)).toMatchObject({ threadId, runActive: true, runId: "run-1" });
  }, 20_000);
});
