/**
 * The shared status hub and grace window while Redis is up, connected and
 * silent (its process stopped with SIGSTOP, as a hung host or a cut network
 * looks): node-redis's own timeout stops counting once a command is
 * written, so only each call's own deadline answers. Every call under test
 * is awaited while Redis is still paused: settling at all is the proof that
 * nothing hangs, with no clock to race. What Redis does late, once it runs
 * again, is checked too: a hold given up is withdrawn, a claim given up is
 * given back, holds taken late are still expired.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "@jest/globals";
import { randomUUID } from "node:crypto";
import { EventType, type AGUIEvent } from "@ag-ui/core";
import { firstValueFrom } from "rxjs";
import { initialThreadStatus } from "../../../lib/model/thread-status.js";
import { connectRedis, RedisDeadlineError, withDeadline, type RedisConnection } from "../../../lib/state/redis-connection.js";
import { RedisDisconnectGrace } from "../../../lib/threads/disconnect-grace-redis.js";
import { redisSharedThreads } from "../../../lib/threads/shared-threads-redis.js";
import { RedisThreadStatusHub } from "../../../lib/threads/status-hub-redis.js";
import { captureLogs, type CapturedLogs } from "../../support/logs.js";
import { startRedisServer, type RedisServer } from "../../../lib/testing/redis-server.js";

/** Each call's deadline here: short, as only settling while Redis is paused matters, not when. */
const DEADLINE_MS = 200;

const started = (threadId: string): AGUIEvent => ({ type: EventType.RUN_STARTED, threadId, runId: "run-1" });
const pipelineAt = (sequence: number): AGUIEvent => ({
  type: EventType.CUSTOM,
  name: "iac-code.pipeline.v1",
  value: { sequence, eventType: "step" },
});

/** Polls `condition` until it holds (something Redis or a deadline brings by itself); the test's timeout fails it otherwise. */
async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((resolve) => setTimeout(resolve, 10));
}

describe("the shared threads while Redis is silent", () => {
  let server: RedisServer;
  let logs: CapturedLogs;
  const connections: RedisConnection[] = [];
  const closing: Array<() => unknown> = [];
  /** A connection as the service makes it (`state/redis-connection.ts`). */
  const connect = async () => {
    const connection = await connectRedis(server.url, { commandTimeoutMs: DEADLINE_MS });
    connections.push(connection);
    return connection;
  };
  const logged = (msg: string) => logs.matching({ msg }).length;

  beforeAll(async () => {
    server = await startRedisServer();
  });
  afterEach(async () => {
    // Whatever a test left paused runs again before anything is closed.
    server.resume();
    closing.splice(0).forEach((close) => close());
    await Promise.allSettled(connections.splice(0).map((connection) => connection.close()));
  });
  afterAll(async () => {
    await server.stop();
  });

  it("drops a run's status writes and shows a watcher the stored state's status, then serves live status again", async () => {
    logs = captureLogs();
    const connection = await connect();
    const channels = connection.client.duplicate();
    await channels.connect();
    closing.push(() => channels.destroy());
    const hub = new RedisThreadStatusHub({
      redis: connection.client,
      channels,
      prefix: `spec-${randomUUID()}:`,
      commandTimeoutMs: DEADLINE_MS,
      // Far past the test: only each command's own deadline can end the wait.
      snapshotTimeoutMs: 600_000,
      log: logs.logger,
    });
    const threadId = `thread-${randomUUID()}`;
    const seed = initialThreadStatus(threadId);

    server.pause();
    hub.record(threadId, started(threadId));
    await until(() => logged("the shared thread status could not be written") === 1);
    expect(await firstValueFrom(hub.watch(threadId, () => seed))).toEqual(seed);
    server.resume();

    // The write sent while Redis was silent lands late; the next one, and a new watcher, are served as ever.
    hub.record(threadId, pipelineAt(1));
    await until(async () => (await firstValueFrom(hub.watch(threadId, () => seed))).pipeline.sequence === 1);
    expect(await firstValueFrom(hub.watch(threadId, () => seed))).toMatchObject({ runActive: true, runId: "run-1" });
  });

  it("cancels a hold at once, watches without a claim, and says STATE_UNAVAILABLE where a request needs the window", async () => {
    logs = captureLogs();
    const connection = await connect();
    const prefix = `spec-${randomUUID()}:`;
    const expired: string[] = [];
    const grace = new RedisDisconnectGrace({
      redis: connection.client,
      // Long enough that no window ends by itself during the test.
      graceMs: 600_000,
      sweepMs: 600_000,
      commandTimeoutMs: DEADLINE_MS,
      prefix,
      expireHeld: ({ executionId }) => expired.push(`${executionId} from ids`),
      log: logs.logger,
    });
    closing.push(() => grace.close());
    const execution = (threadId = `thread-${randomUUID()}`) => {
      const executionId = `execution-${randomUUID()}`;
      return { threadId, executionId, taskId: `task-${executionId}`, expire: () => expired.push(executionId) };
    };
    const heldBefore = execution();
    const claimedBefore = execution();
    grace.hold(heldBefore);
    grace.hold(claimedBefore);
    await until(async () => (await grace.holds(heldBefore.executionId)) && (await grace.holds(claimedBefore.executionId)));

    server.pause();
    const heldWhileSilent = execution();
    grace.hold(heldWhileSilent);
    await until(() => expired.includes(heldWhileSilent.executionId));
    expect(await grace.claim(claimedBefore.executionId)).toBe(false);
    await expect(grace.holds(heldBefore.executionId)).rejects.toMatchObject({ code: "STATE_UNAVAILABLE" });
    await expect(grace.expireThread(heldBefore.threadId)).rejects.toMatchObject({ code: "STATE_UNAVAILABLE" });
    expect(expired).toEqual([heldWhileSilent.executionId]);
    server.resume();

    // What Redis did late: the new turn's take still expires the hold it took, once and by its own run.
    await until(() => expired.includes(heldBefore.executionId));
    // The hold given up is withdrawn (its task is cancelled already), and the claim given up is given back.
    expect(await grace.holds(heldWhileSilent.executionId)).toBe(false);
    await until(async () => (await connection.client.hGet(`${prefix}grace:${claimedBefore.executionId}`, "observers")) === "0");
    expect(expired).toEqual([heldWhileSilent.executionId, heldBefore.executionId]);
  });

  it("closes the channels and the connection without waiting for a silent Redis", async () => {
    logs = captureLogs();
    const connection = await connect();
    const shared = redisSharedThreads({
      client: connection.client,
      prefix: `spec-${randomUUID()}:`,
      commandTimeoutMs: DEADLINE_MS,
      log: logs.logger,
    });
    const threadId = `thread-${randomUUID()}`;
    // Once a watcher has its status, the channel connection is up.
    await firstValueFrom(shared.hub.watch(threadId, () => initialThreadStatus(threadId)));

    server.pause();
    // A watcher joins a channel while Redis is silent: its subscription waits on the channel connection.
    const watcher = shared.hub.watch(`thread-${randomUUID()}`, () => initialThreadStatus(threadId)).subscribe();
    closing.push(() => watcher.unsubscribe());
    await expect(shared.close()).resolves.toBeUndefined();
    // Then the instance's own connection, as a shutdown closes it (`server.ts`), with a command still unanswered on it.
    await expect(withDeadline(connection.client.get("unanswered"), DEADLINE_MS)).rejects.toBeInstanceOf(RedisDeadlineError);
    await expect(connection.close()).resolves.toBeUndefined();
  });
});
