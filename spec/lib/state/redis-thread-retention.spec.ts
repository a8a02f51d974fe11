/**
 * Retention in the Redis store (IAC_CODE_AGUI_THREAD_RETENTION_S), against
 * a real `redis-server`: each save sets the thread's hash to expire the
 * retention after it (later for a pending interrupt that expires later,
 * never for one with no expiry), and a lease taken or renewed puts that
 * expiry off, so a thread with a run does not expire under it.
 */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "@jest/globals";
import { RedisThreadStore, type RenewalSchedule } from "../../../lib/state/redis-thread-store.js";
import type { ThreadState } from "../../../lib/state/thread-state.js";
import { redisForSpec } from "./redis-for-spec.js";
import { threadState } from "./thread-state-fixture.js";

const HOUR_MS = 60 * 60 * 1000;
const RETENTION_MS = 24 * HOUR_MS;
/** Room for the commands between a save and the test's PTTL. */
const SLACK_MS = 60_000;

const redis = redisForSpec();
let nowMs: number;

async function retainingStore(options: { retentionMs?: number; renewalSchedule?: RenewalSchedule } = {}) {
  const connection = await redis.connect();
  nowMs = Date.now();
  return new RedisThreadStore({
    client: connection.client,
    keyPrefix: `test-${randomUUID()}:`,
    retentionMs: RETENTION_MS,
    now: () => nowMs,
    ...options,
  });
}

const idleThread = (threadId: string): ThreadState => {
  const state = threadState(threadId);
  return { ...state, execution: { ...state.execution, pending: {} } };
};

const threadWaiting = (threadId: string, expiresAt: string | undefined): ThreadState => {
  const state = threadState(threadId);
  const pending = state.execution.pending["input-1"]!;
  const waiting = expiresAt === undefined ? { value: pending.value, sideband: false } : { ...pending, expiresAt };
  return { ...state, execution: { ...state.execution, pending: { "input-1": waiting } } };
};

const ttlOf = (store: RedisThreadStore, threadId: string) => redis.raw.client.pTTL(store.threadKey(threadId));
/** As if most of the retention had passed since the last save. */
const almostExpired = (store: RedisThreadStore, threadId: string) => redis.raw.client.pExpire(store.threadKey(threadId), 5000);

describe("RedisThreadStore retention", () => {
  it("lets a saved thread expire the retention after its save, and each save starts it again", async () => {
    const store = await retainingStore();
    await store.save(idleThread("t"));
    expect(await ttlOf(store, "t")).toBeGreaterThan(RETENTION_MS - SLACK_MS);
    expect(await ttlOf(store, "t")).toBeLessThanOrEqual(RETENTION_MS);

    await almostExpired(store, "t");
    const lease = await store.tryAcquire("t");
    await store.save(idleThread("t"), lease);
    await lease!.release();
    expect(await ttlOf(store, "t")).toBeGreaterThan(RETENTION_MS - SLACK_MS);
    await store.close();
  });

  it("keeps a thread until its pending interrupt expires, and for good while one never does", async () => {
    const store = await retainingStore();
    const expiresAt = nowMs + 3 * RETENTION_MS;
    await store.save(threadWaiting("due", new Date(expiresAt).toISOString()));
    await store.save(threadWaiting("any-time", undefined));
    await store.save(threadWaiting("expired", new Date(nowMs - HOUR_MS).toISOString()));

    expect(await ttlOf(store, "due")).toBeGreaterThan(3 * RETENTION_MS - SLACK_MS);
    expect(await ttlOf(store, "due")).toBeLessThanOrEqual(3 * RETENTION_MS);
    expect(await ttlOf(store, "any-time")).toBe(-1);
    expect(await ttlOf(store, "expired")).toBeLessThanOrEqual(RETENTION_MS);
    expect(await ttlOf(store, "expired")).toBeGreaterThan(RETENTION_MS - SLACK_MS);
    await store.close();
  });

  it("puts the expiry off while a run holds the thread: on the lease and on each renewal", async () => {
    const renewals = new Set<() => void>();
    const store = await retainingStore({
      renewalSchedule: (renew) => {
        renewals.add(renew);
        return () => renewals.delete(renew);
      },
    });
    await store.save(idleThread("running"));
    await almostExpired(store, "running");

    const lease = await store.tryAcquire("running");
    expect(await ttlOf(store, "running")).toBeGreaterThan(RETENTION_MS - SLACK_MS);

    await almostExpired(store, "running");
    renewals.forEach((renew) => renew());
    await expectEventually(async () => (await ttlOf(store, "running")) > RETENTION_MS - SLACK_MS);
    await lease!.release();
    await store.close();
  });

  it("keeps every thread for good with retention 0", async () => {
    const store = await retainingStore({ retentionMs: 0 });
    await store.save(idleThread("kept"));
    expect(await ttlOf(store, "kept")).toBe(-1);
    await (await store.tryAcquire("kept"))!.release();
    expect(await ttlOf(store, "kept")).toBe(-1);
    await store.close();
  });
});

/** A renewal runs in the background; its effect is awaited, not slept for. */
async function expectEventually(check: () => Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("the condition never held");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
