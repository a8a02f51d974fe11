/**
 * The Redis thread store against a real `redis-server` (lib/testing/redis-server.ts):
 * the contract every store keeps, then what only a shared store promises —
 * leases and fencing between instances, renewal, what a load reads, and
 * Redis going away and coming back.
 */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "@jest/globals";
import { connectRedis } from "../../../lib/state/redis-connection.js";
import { RedisThreadStore, UNWRITTEN_THREAD_KEPT_MS, type RenewalSchedule } from "../../../lib/state/redis-thread-store.js";
import { StatePersistenceError, StateUnavailableError } from "../../../lib/state/thread-store.js";
import { redisForSpec } from "./redis-for-spec.js";
import { describeThreadStoreContract } from "./thread-store-contract.js";
import { threadState } from "./thread-state-fixture.js";

const redis = redisForSpec();

/** A store on a connection of its own, as another instance would have, under the test's own key prefix. */
async function storeOn(
  keyPrefix: string,
  options: { leaseTtlMs?: number; commandTimeoutMs?: number; renewalSchedule?: RenewalSchedule } = {},
) {
  const connection = await redis.connect();
  return new RedisThreadStore({ client: connection.client, keyPrefix, ...options });
}

/** Renewals run when the test says, not on a timer. */
function manualRenewals(): { schedule: RenewalSchedule; renewAll: () => void; stopped: () => number } {
  const live = new Set<() => void>();
  let stoppedCount = 0;
  return {
    schedule: (renew) => {
      live.add(renew);
      return () => {
        if (live.delete(renew)) stoppedCount++;
      };
    },
    renewAll: () => live.forEach((renew) => renew()),
    stopped: () => stoppedCount,
  };
}

describeThreadStoreContract("RedisThreadStore", async () => {
  const store = await storeOn(`test-${randomUUID()}:`);
  return {
    store,
    writeRaw: async (threadId, content) => {
      await redis.raw.client.hSet(store.threadKey(threadId), "state", content);
    },
    readRaw: async (threadId) => (await redis.raw.client.hGet(store.threadKey(threadId), "state")) ?? undefined,
    where: (threadId) => store.threadKey(threadId),
    remove: () => store.close(),
  };
});

describe("RedisThreadStore: keys", () => {
  it("keeps a thread in one hash (state and lease count) and its lease in one expiring key", async () => {
    const store = await storeOn(`test-${randomUUID()}:`, { leaseTtlMs: 10_000 });
    const lease = await store.tryAcquire("t");
    await store.save(threadState("t"), lease);
    expect(await redis.raw.client.keys(`${store.keyPrefix}*`)).toEqual(
      expect.arrayContaining([`${store.keyPrefix}thread:{t}`, `${store.keyPrefix}lease:{t}`]),
    );
    expect(await redis.raw.client.hKeys(store.threadKey("t"))).toEqual(expect.arrayContaining(["state", "leases"]));
    expect(await redis.raw.client.get(store.leaseKey("t"))).toBe(String(lease!.token));
    const ttl = await redis.raw.client.pTTL(store.leaseKey("t"));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(10_000);
    await lease!.release();
    expect(await redis.raw.client.exists(store.leaseKey("t"))).toBe(0);
    await store.close();
  });

  it("lets the hash of a thread leased but never written expire, and keeps one with state for good", async () => {
    const store = await storeOn(`test-${randomUUID()}:`);
    const unwritten = await store.tryAcquire("unwritten");
    await unwritten!.release();
    const kept = await redis.raw.client.pTTL(store.threadKey("unwritten"));
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThanOrEqual(UNWRITTEN_THREAD_KEPT_MS);
    const written = await store.tryAcquire("unwritten");
    await store.save(threadState("unwritten"), written);
    expect(await redis.raw.client.pTTL(store.threadKey("unwritten"))).toBe(-1);
    await written!.release();
    // A later lease leaves a hash with state as it is.
    await (await store.tryAcquire("unwritten"))!.release();
    expect(await redis.raw.client.pTTL(store.threadKey("unwritten"))).toBe(-1);
    await store.close();
  });

  it("reads one field of one key on a load: no scan, no other thread", async () => {
    const store = await storeOn(`test-${randomUUID()}:`);
    await store.save(threadState("wanted"));
    await store.save(threadState("neighbour"));
    const monitor = await connectRedis(redis.url);
    const seen: string[] = [];
    await monitor.client.monitor((line) => seen.push(line));
    try {
      // The MONITOR stream tells of commands in order: a PING after the load marks its end.
      await store.load("wanted");
      await redis.raw.client.ping();
      await waitFor(() => seen.some((line) => line.includes('"PING"')));
    } finally {
      monitor.client.destroy();
    }
    const ours = seen.filter((line) => !line.includes('"PING"') && !line.includes('"MONITOR"'));
    expect(ours.join("\n")).toContain(`${store.keyPrefix}thread:{wanted}`);
    expect(ours.join("\n")).not.toContain("neighbour");
    expect(ours.join("\n")).not.toMatch(/"(SCAN|KEYS|HGETALL)"/i);
  });
});

describe("RedisThreadStore: leases between instances", () => {
  it("gives one lease per thread across two instances, and the other one the thread once it is released", async () => {
    const prefix = `test-${randomUUID()}:`;
    const [a, b] = [await storeOn(prefix), await storeOn(prefix)];
    const held = await a.tryAcquire("t");
    expect(held).toBeDefined();
    expect(await b.tryAcquire("t")).toBeUndefined();
    await held!.release();
    const taken = await b.tryAcquire("t");
    expect(taken!.token).toBeGreaterThan(held!.token);
    await Promise.all([a.close(), b.close()]);
  });

  it("fences a holder whose lease expired: its saves are refused and its release leaves the new holder's lease alone", async () => {
    const prefix = `test-${randomUUID()}:`;
    const renewals = manualRenewals();
    const a = await storeOn(prefix, { renewalSchedule: renewals.schedule });
    const b = await storeOn(prefix);
    const stale = await a.tryAcquire("t");
    await a.save(threadState("t", { cwd: "/a" }), stale);
    // The lease runs out as it does for an instance that stopped renewing (killed, or cut off from Redis).
    await redis.raw.client.pExpire(a.leaseKey("t"), 1);
    await waitFor(async () => (await redis.raw.client.exists(a.leaseKey("t"))) === 0);

    const fresh = await b.tryAcquire("t");
    expect(fresh!.token).toBeGreaterThan(stale!.token);
    await b.save(threadState("t", { cwd: "/b" }), fresh);
    await expect(a.save(threadState("t", { cwd: "/a-late" }), stale)).rejects.toThrow(StatePersistenceError);
    await stale!.release();
    expect(await a.tryAcquire("t")).toBeUndefined();
    expect((await b.load("t"))?.cwd).toBe("/b");

    // Its renewal finds the lease gone and stops, instead of taking it back.
    renewals.renewAll();
    await waitFor(() => renewals.stopped() === 1);
    expect(await redis.raw.client.get(a.leaseKey("t"))).toBe(String(fresh!.token));
    await Promise.all([a.close(), b.close()]);
  });

  it("renews a live lease to its full TTL, and stops renewing once it is released", async () => {
    const renewals = manualRenewals();
    const store = await storeOn(`test-${randomUUID()}:`, { leaseTtlMs: 60_000, renewalSchedule: renewals.schedule });
    const lease = await store.tryAcquire("t");
    await redis.raw.client.pExpire(store.leaseKey("t"), 5_000);
    renewals.renewAll();
    await waitFor(async () => (await redis.raw.client.pTTL(store.leaseKey("t"))) > 5_000);
    await lease!.release();
    expect(renewals.stopped()).toBe(1);
    await store.close();
  });

  it("lets a lease nobody renews expire after its TTL", async () => {
    const store = await storeOn(`test-${randomUUID()}:`, { leaseTtlMs: 300, renewalSchedule: manualRenewals().schedule });
    await store.tryAcquire("t");
    expect(await store.tryAcquire("t")).toBeUndefined();
    await waitFor(async () => (await redis.raw.client.exists(store.leaseKey("t"))) === 0);
    expect(await store.tryAcquire("t")).toBeDefined();
    await store.close();
  });
});

describe("RedisThreadStore: Redis away and back", () => {
  it("fails fast while Redis is down, corrupts nothing, and serves again once it is back, with what it had persisted", async () => {
    const store = await storeOn(`test-${randomUUID()}:`);
    const lease = await store.tryAcquire("t");
    await store.save(threadState("t", { cwd: "/before" }), lease);

    await redis.server.halt();
    try {
      const started = Date.now();
      await expect(store.load("t")).rejects.toBeInstanceOf(StateUnavailableError);
      await expect(store.tryAcquire("u")).rejects.toBeInstanceOf(StateUnavailableError);
      await expect(store.save(threadState("t", { cwd: "/during" }), lease)).rejects.toBeInstanceOf(StatePersistenceError);
      expect(await store.available()).toBe(false);
      expect(Date.now() - started).toBeLessThan(1000);
    } finally {
      await redis.server.restart();
    }
    // The test's own connection is back too before it looks.
    await waitFor(() => redis.raw.client.isReady);
    await waitFor(() => store.available());
    expect((await store.load("t"))?.cwd).toBe("/before");
    // The lease survived the restart (Redis persists it with its expiry): its holder writes on.
    await store.save(threadState("t", { cwd: "/after" }), lease);
    expect((await store.load("t"))?.cwd).toBe("/after");
    await lease!.release();
    await store.close();
  });

  it("fails within the command timeout while Redis does not answer, and each command still gets its own answer afterwards", async () => {
    const store = await storeOn(`test-${randomUUID()}:`, { commandTimeoutMs: 300 });
    const lease = await store.tryAcquire("t");
    await store.save(threadState("t", { cwd: "/before" }), lease);
    // Up, connected, and silent: as a stopped process or a cut network looks.
    await redis.raw.client.sendCommand(["CLIENT", "PAUSE", "2000", "ALL"]);
    const started = Date.now();
    await expect(store.load("t")).rejects.toBeInstanceOf(StateUnavailableError);
    await expect(store.save(threadState("t", { cwd: "/sent-while-silent" }), lease)).rejects.toBeInstanceOf(StatePersistenceError);
    await expect(store.tryAcquire("u")).rejects.toBeInstanceOf(StateUnavailableError);
    expect(await store.available()).toBe(false);
    expect(Date.now() - started).toBeLessThan(1500);

    // Redis answers again: the commands it held ran in order (the save under its live lease too), and no answer went astray.
    await waitFor(() => store.available());
    expect((await store.load("t"))?.cwd).toBe("/sent-while-silent");
    await store.save(threadState("t", { cwd: "/after" }), lease);
    expect((await store.load("t"))?.cwd).toBe("/after");
    await lease!.release();
    await store.close();
  });

  it("never throws from a release while Redis is down: the lease expires by itself", async () => {
    const store = await storeOn(`test-${randomUUID()}:`, { leaseTtlMs: 500 });
    const lease = await store.tryAcquire("t");
    await redis.server.halt();
    try {
      await expect(lease!.release()).resolves.toBeUndefined();
    } finally {
      await redis.server.restart();
    }
    // The test's own connection is back too before it looks.
    await waitFor(() => redis.raw.client.isReady);
    await waitFor(() => store.available());
    await waitFor(async () => (await store.tryAcquire("t")) !== undefined);
    await store.close();
  });
});

/** Polls `condition` until it holds (a state Redis reaches by itself: an expiry, a reconnection), failing after 10 s. */
async function waitFor(condition: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error("condition not reached within 10 s");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
