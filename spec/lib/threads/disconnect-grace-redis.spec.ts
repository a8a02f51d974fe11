/**
 * The disconnect grace window shared over Redis: two windows on one real
 * redis-server, as two instances have them. Redis keeps the time, so these
 * use short real windows and wait for the expiry itself, not for a clock.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "@jest/globals";
import { randomUUID } from "node:crypto";
import { createClient } from "redis";
import { RedisDisconnectGrace, type HeldIds } from "../../../lib/threads/disconnect-grace-redis.js";
import { startRedisServer, type RedisServer } from "../../../lib/testing/redis-server.js";

type Client = ReturnType<typeof createClient>;

const WINDOW_MS = 150;

/** Every expiry, by whom: the run's own `expire` on the instance that held it, or an instance's `expireHeld`. */
class Expiries {
  readonly seen: Array<{ by: string; executionId: string }> = [];
  #waiters: Array<() => void> = [];

  note(by: string, executionId: string): void {
    this.seen.push({ by, executionId });
    this.#waiters.splice(0).forEach((wake) => wake());
  }

  /** Resolves at the next expiry (or at once when there was one already). */
  async next(count = 1, timeoutMs = 5000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.seen.length < count) {
      if (Date.now() > deadline) throw new Error(`expected ${count} expiries, saw ${this.seen.length}`);
      await new Promise<void>((resolve) => {
        this.#waiters.push(resolve);
        setTimeout(resolve, 50);
      });
    }
  }
}

/** Resolves once `grace` sees the hold: another instance's hold reaches Redis on its own connection, in its own time. */
async function heldFor(grace: RedisDisconnectGrace, executionId: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!(await grace.holds(executionId))) if (Date.now() > deadline) throw new Error(`${executionId} is not held`);
}

/** Lets time pass on purpose: what must not happen gets the chance to. */
const letPass = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("RedisDisconnectGrace", () => {
  let server: RedisServer;
  const clients: Client[] = [];
  const graces: RedisDisconnectGrace[] = [];
  let expiries: Expiries;
  const instance = async (name: string, options: { sweepMs?: number; graceMs?: number; claimTtlMs?: number } = {}) => {
    const client = createClient({ url: server.url });
    await client.connect();
    clients.push(client);
    const grace = new RedisDisconnectGrace({
      redis: client,
      graceMs: options.graceMs ?? WINDOW_MS,
      sweepMs: options.sweepMs ?? 60_000,
      ...(options.claimTtlMs === undefined ? {} : { claimTtlMs: options.claimTtlMs }),
      prefix: "spec:",
      expireHeld: ({ executionId }: HeldIds) => expiries.note(`${name} from ids`, executionId),
    });
    graces.push(grace);
    return grace;
  };
  const held = (by: string, threadId = `thread-${randomUUID()}`) => {
    const executionId = `execution-${randomUUID()}`;
    return { threadId, executionId, taskId: `task-${executionId}`, expire: () => expiries.note(by, executionId) };
  };

  beforeAll(async () => {
    server = await startRedisServer();
  });
  afterEach(() => {
    graces.splice(0).forEach((grace) => grace.close());
  });
  afterAll(async () => {
    await Promise.allSettled(clients.map((client) => client.close()));
    await server.stop();
  });

  it("expires a held execution once when its window runs out, though every instance times or sweeps it", async () => {
    expiries = new Expiries();
    const a = await instance("a", { sweepMs: 20 });
    await instance("b", { sweepMs: 20 });
    const execution = held("a's run");
    a.hold(execution);
    await expiries.next();
    await letPass(4 * WINDOW_MS);
    // A's timer and both sweeps race for it: whoever takes it expires it, and nobody else.
    expect(expiries.seen).toEqual([{ by: expect.stringMatching(/^(a's run|b from ids)$/), executionId: execution.executionId }]);
    expect(await a.holds(execution.executionId)).toBe(false);
  });

  it("lets a client come back through another instance: no expiry while it watches, one when it leaves early", async () => {
    expiries = new Expiries();
    const [a, b] = [await instance("a"), await instance("b")];
    const execution = held("a's run");
    a.hold(execution);
    await heldFor(b, execution.executionId);
    expect(await b.claim(execution.executionId)).toBe(true);
    await letPass(3 * WINDOW_MS);
    expect(expiries.seen).toEqual([]);

    b.unclaim(execution.executionId, false);
    await expiries.next();
    await letPass(2 * WINDOW_MS);
    // A's own timer found the window claimed and let it go: B, which started the new wait, ends it from the ids.
    expect(expiries.seen).toEqual([{ by: "b from ids", executionId: execution.executionId }]);
  });

  it("keeps a claim while its instance renews it, and lets it lapse when that instance died", async () => {
    expiries = new Expiries();
    const a = await instance("a", { sweepMs: 30 });
    const b = await instance("b", { claimTtlMs: 90 });
    const execution = held("a's run");
    a.hold(execution);
    await heldFor(b, execution.executionId);
    expect(await b.claim(execution.executionId)).toBe(true);
    await letPass(4 * (90 + WINDOW_MS));
    expect(expiries.seen).toEqual([]);

    b.close();
    await expiries.next();
    expect(expiries.seen).toEqual([{ by: "a's run", executionId: execution.executionId }]);
  });

  it("ends the wait for good when the returning client saw the task settle", async () => {
    expiries = new Expiries();
    const [a, b] = [await instance("a", { sweepMs: 20 }), await instance("b", { sweepMs: 20 })];
    const execution = held("a's run");
    a.hold(execution);
    await heldFor(b, execution.executionId);
    expect(await b.claim(execution.executionId)).toBe(true);
    b.unclaim(execution.executionId, true);
    await letPass(4 * WINDOW_MS);
    expect(expiries.seen).toEqual([]);
    expect(await a.holds(execution.executionId)).toBe(false);
    expect(await b.claim(execution.executionId)).toBe(false);
  });

  it("gives up at once on a new turn of the thread on another instance, and only once", async () => {
    expiries = new Expiries();
    const [a, b] = [await instance("a", { graceMs: 60_000 }), await instance("b", { graceMs: 60_000 })];
    const execution = held("a's run");
    a.hold(execution);
    await heldFor(b, execution.executionId);
    await b.expireThread(execution.threadId);
    expect(expiries.seen).toEqual([{ by: "b from ids", executionId: execution.executionId }]);
    await b.expireThread(execution.threadId);
    await a.expireThread(execution.threadId);
    expect(expiries.seen).toHaveLength(1);
  });

  it("ends a wait whose instance died, from another instance's sweep", async () => {
    expiries = new Expiries();
    const a = await instance("a");
    await instance("b", { sweepMs: 30 });
    const execution = held("a's run");
    a.hold(execution);
    await heldFor(a, execution.executionId);
    a.close();
    await expiries.next();
    expect(expiries.seen).toEqual([{ by: "b from ids", executionId: execution.executionId }]);
  });

  it("asks Redis nothing when there is no window", async () => {
    const asked: string[] = [];
    const grace = new RedisDisconnectGrace({
      redis: { eval: (script) => (asked.push(script), Promise.resolve(0)) },
      graceMs: 0,
      expireHeld: () => undefined,
    });
    graces.push(grace);
    expect(grace.enabled).toBe(false);
    expect(await grace.claim("e1")).toBe(false);
    expect(await grace.holds("e1")).toBe(false);
    await grace.expireThread("t1");
    expect(asked).toEqual([]);
  });

  it("cancels at once when Redis cannot keep the window, and says the state is unavailable where a request needs it", async () => {
    expiries = new Expiries();
    const down = createClient({ url: "redis://127.0.0.1:1/0", socket: { reconnectStrategy: false } });
    down.on("error", () => undefined);
    const grace = new RedisDisconnectGrace({
      redis: down,
      graceMs: WINDOW_MS,
      expireHeld: () => expiries.note("ids", "?"),
      prefix: "spec:",
    });
    graces.push(grace);
    const execution = held("the run");
    grace.hold(execution);
    await expiries.next();
    expect(expiries.seen).toEqual([{ by: "the run", executionId: execution.executionId }]);
    await expect(grace.holds(execution.executionId)).rejects.toMatchObject({ code: "STATE_UNAVAILABLE" });
    expect(await grace.claim(execution.executionId)).toBe(false);
  });
});
