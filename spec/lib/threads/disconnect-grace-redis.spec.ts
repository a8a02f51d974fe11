/**
 * The disconnect grace window shared over Redis: two windows on one real
 * redis-server, as two instances have them. Redis keeps the time, so these
 * use short real windows and wait for the expiry itself, not for a clock.
 *
 * What must not happen (a second expiry, one while a client watches) is
 * checked once every instance has had its chance to do it, not after a
 * pause: each instance's Redis connection is watched (`Scripts`), and a
 * test waits for the timer or sweep that would have done it to have asked
 * Redis and had its answer. On a slow machine that takes longer; it cannot
 * pass before it happened. Where the order of an instance's timer and the
 * test's steps matters, the test holds the reply its timer starts from.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "@jest/globals";
import { randomUUID } from "node:crypto";
import { createClient } from "redis";
import { RedisDisconnectGrace, type HeldIds } from "../../../lib/threads/disconnect-grace-redis.js";
import type { RedisScripting } from "../../../lib/threads/redis-scripting.js";
import { startRedisServer, type RedisServer } from "../../../lib/testing/redis-server.js";

type Client = ReturnType<typeof createClient>;

const WINDOW_MS = 150;
const PREFIX = "spec:";

/** Counts what a test has seen happen (a script answered, an expiry), so "sent after" has a meaning across instances. */
let seen = 0;

/**
 * The grace window's scripts, told apart by a line only each one has
 * (`disconnect-grace-redis.ts`). Should the scripts change, a wait for one
 * fails for want of it: it never passes without it.
 */
const SCRIPT_KINDS = [
  ["hold", "redis.call('SADD', KEYS[3], ARGV[1])"],
  ["claim", "redis.call('HINCRBY', KEYS[1], 'observers', 1)"],
  ["unclaim", "redis.call('HINCRBY', KEYS[1], 'observers', -1)"],
  ["takeIfDue", "redis.call('ZSCORE', KEYS[1], ARGV[1])"],
  ["sweep", "ZRANGEBYSCORE"],
  ["takeThread", "SMEMBERS"],
] as const;
type ScriptKind = (typeof SCRIPT_KINDS)[number][0] | "other";
const kindOf = (script: string): ScriptKind => SCRIPT_KINDS.find(([, line]) => script.includes(line))?.[0] ?? "other";

interface AnsweredScript {
  by: string;
  kind: ScriptKind;
  /** The execution a script about one execution names first; the prefix for a sweep. */
  firstArgument: string | undefined;
  /** `seen` when it was sent: it was sent after whatever was seen at or below that count. */
  sentAt: number;
  reply: unknown;
}

/** Every script the instances ran, once answered. */
class Scripts {
  readonly answered: AnsweredScript[] = [];
  #waiters = new Set<() => void>();

  /** `client` as instance `by` uses it, its scripts noted; a HOLD's reply reaches the instance only once `holdReplies` settles. */
  observe(by: string, client: Client, holdReplies?: Promise<void>): RedisScripting {
    return {
      eval: async (script, options) => {
        const kind = kindOf(script);
        const sentAt = seen;
        const reply = await client.eval(script, options);
        if (kind === "hold" && holdReplies) await holdReplies;
        seen++;
        this.answered.push({ by, kind, firstArgument: options.arguments[0], sentAt, reply });
        // After the instance has acted on the reply (its handlers run before the next turn of the loop).
        setImmediate(() => this.#waiters.forEach((wake) => wake()));
        return reply;
      },
    };
  }

  /** Resolves once a script matching `match` was answered and its instance acted on the reply; fails after `timeoutMs`. */
  async until(what: string, match: (script: AnsweredScript) => boolean, timeoutMs = 10_000): Promise<AnsweredScript> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      await new Promise((resolve) => setImmediate(resolve));
      const found = this.answered.find(match);
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`${what}: not answered within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const wake = () => {
          this.#waiters.delete(wake);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(wake, 100);
        this.#waiters.add(wake);
      });
    }
  }
}

/** Every expiry, by whom: the run's own `expire` on the instance that held it, or an instance's `expireHeld`. */
class Expiries {
  readonly seen: Array<{ by: string; executionId: string }> = [];
  /** `seen` (the count) at each expiry. */
  readonly at: number[] = [];
  #waiters: Array<() => void> = [];

  note(by: string, executionId: string): void {
    this.seen.push({ by, executionId });
    this.at.push(++seen);
    this.#waiters.splice(0).forEach((wake) => wake());
  }

  /** Resolves at the next expiry (or at once when there was one already). */
  async next(count = 1, timeoutMs = 10_000): Promise<void> {
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
  const deadline = Date.now() + 10_000;
  while (!(await grace.holds(executionId))) if (Date.now() > deadline) throw new Error(`${executionId} is not held`);
}

/** A promise the test settles: the reply an instance's timer starts from, held until the test has done its part. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

describe("RedisDisconnectGrace", () => {
  let server: RedisServer;
  /** The test's own connection, to read what the instances left in Redis. */
  let redis: Client;
  const clients: Client[] = [];
  const graces: RedisDisconnectGrace[] = [];
  let expiries: Expiries;
  let scripts: Scripts;
  const instance = async (
    name: string,
    options: { sweepMs?: number; graceMs?: number; claimTtlMs?: number; holdReplies?: Promise<void> } = {},
  ) => {
    const client = createClient({ url: server.url });
    await client.connect();
    clients.push(client);
    const grace = new RedisDisconnectGrace({
      redis: scripts.observe(name, client, options.holdReplies),
      graceMs: options.graceMs ?? WINDOW_MS,
      sweepMs: options.sweepMs ?? 60_000,
      ...(options.claimTtlMs === undefined ? {} : { claimTtlMs: options.claimTtlMs }),
      // A reply the test holds is not Redis being late: no deadline runs out while it does.
      ...(options.holdReplies === undefined ? {} : { commandTimeoutMs: 60_000 }),
      prefix: PREFIX,
      expireHeld: ({ executionId }: HeldIds) => expiries.note(`${name} from ids`, executionId),
    });
    graces.push(grace);
    return grace;
  };
  const held = (by: string, threadId = `thread-${randomUUID()}`) => {
    const executionId = `execution-${randomUUID()}`;
    return { threadId, executionId, taskId: `task-${executionId}`, expire: () => expiries.note(by, executionId) };
  };
  /** A script of `kind` that `by` sent about `executionId` (or, for a sweep, any), after `seenAt`, and had answered. */
  const answered = (by: string, kind: ScriptKind, { executionId, after = 0 }: { executionId?: string; after?: number } = {}) =>
    scripts.until(`${by}'s ${kind}${executionId ? ` of ${executionId}` : ""} sent after ${after}`, (script) => {
      const about = executionId === undefined || script.firstArgument === executionId;
      return script.by === by && script.kind === kind && about && script.sentAt >= after;
    });
  /** Redis's clock, which times every window. */
  const redisNowMs = async () => Number(await redis.eval("local t = redis.call('TIME') return t[1] * 1000 + math.floor(t[2] / 1000)"));
  /** When the execution's wait is due by Redis's clock; undefined when nothing waits. */
  const dueAt = async (executionId: string) => {
    const score = await redis.zScore(`${PREFIX}grace-due`, executionId);
    return score === null ? undefined : score;
  };

  beforeAll(async () => {
    server = await startRedisServer();
    redis = createClient({ url: server.url });
    await redis.connect();
    clients.push(redis);
  });
  beforeEach(() => {
    expiries = new Expiries();
    scripts = new Scripts();
  });
  afterEach(() => {
    graces.splice(0).forEach((grace) => grace.close());
  });
  afterAll(async () => {
    await Promise.allSettled(clients.map((client) => client.close()));
    await server.stop();
  });

  it("expires a held execution once when its window runs out, though every instance times or sweeps it", async () => {
    const a = await instance("a", { sweepMs: 20 });
    await instance("b", { sweepMs: 20 });
    const execution = held("a's run");
    a.hold(execution);
    await expiries.next();
    // A's timer and both sweeps race for it: each has had its go once the first took it.
    const after = expiries.at[0]!;
    await answered("a", "takeIfDue", { executionId: execution.executionId });
    await answered("a", "sweep", { after });
    await answered("b", "sweep", { after });
    // Whoever took it expired it, and nobody else.
    expect(expiries.seen).toEqual([{ by: expect.stringMatching(/^(a's run|b from ids)$/), executionId: execution.executionId }]);
    expect(await a.holds(execution.executionId)).toBe(false);
  });

  it("lets a client come back through another instance: no expiry while it watches, one when it leaves early", async () => {
    // A's timer starts from its hold's reply: held until B watches, so the window runs out while it does.
    const claimed = gate();
    const a = await instance("a", { holdReplies: claimed.opened });
    const b = await instance("b");
    const execution = held("a's run");
    a.hold(execution);
    await heldFor(b, execution.executionId);
    expect(await b.claim(execution.executionId)).toBe(true);
    claimed.open();
    // A's timer asked once the window was over, and was told to wait on (how long, a number): the watched wait is not due.
    const check = await answered("a", "takeIfDue", { executionId: execution.executionId });
    expect(typeof check.reply).toBe("number");
    expect(expiries.seen).toEqual([]);

    b.unclaim(execution.executionId, false);
    await expiries.next();
    // A's own timer found the window claimed and let it go: B, which started the new wait, ends it from the ids.
    expect(expiries.seen).toEqual([{ by: "b from ids", executionId: execution.executionId }]);
    // Taken, so nobody can expire it again.
    expect(await dueAt(execution.executionId)).toBeUndefined();
    expect(await a.holds(execution.executionId)).toBe(false);
  });

  it("keeps a claim while its instance renews it, and lets it lapse when that instance died", async () => {
    // Renewed every 1.3 s: the claim lapses only if B is silent for almost 3 s, which a loaded machine does not make it.
    const claimTtlMs = 4000;
    // A's timer starts from its hold's reply, held until B has claimed the wait, and A does not sweep:
    // nothing can take the wait before the claim. C sweeps, from the claim on.
    const claimed = gate();
    const a = await instance("a", { holdReplies: claimed.opened });
    const b = await instance("b", { claimTtlMs });
    const execution = held("a's run");
    a.hold(execution);
    await heldFor(b, execution.executionId);
    expect(await b.claim(execution.executionId)).toBe(true);
    claimed.open();
    await instance("c", { sweepMs: 30 });
    const firstDeadline = (await dueAt(execution.executionId))!;
    // Past the deadline the claim first set, C swept and found nothing due: B's renewals moved it on.
    while ((await redisNowMs()) <= firstDeadline) await new Promise((resolve) => setTimeout(resolve, 25));
    await answered("c", "sweep", { after: seen });
    expect(expiries.seen).toEqual([]);
    expect(await dueAt(execution.executionId)).toBeGreaterThan(firstDeadline);

    b.close();
    await expiries.next();
    expect(expiries.seen).toEqual([{ by: expect.stringMatching(/^(a's run|c from ids)$/), executionId: execution.executionId }]);
  });

  it("ends the wait for good when the returning client saw the task settle", async () => {
    // A window longer than the test: no sweep can take the wait before B claims it, however slow the claim.
    const a = await instance("a", { sweepMs: 20, graceMs: 60_000 });
    const b = await instance("b", { sweepMs: 20 });
    const execution = held("a's run");
    a.hold(execution);
    await heldFor(b, execution.executionId);
    expect(await b.claim(execution.executionId)).toBe(true);
    b.unclaim(execution.executionId, true);
    const after = (await answered("b", "unclaim", { executionId: execution.executionId })).sentAt + 1;
    // Ended for good: nothing is left in Redis for a timer or a sweep to take, and each instance has swept since.
    expect(await dueAt(execution.executionId)).toBeUndefined();
    await answered("a", "sweep", { after });
    await answered("b", "sweep", { after });
    expect(expiries.seen).toEqual([]);
    expect(await a.holds(execution.executionId)).toBe(false);
    expect(await b.claim(execution.executionId)).toBe(false);
  });

  it("gives up at once on a new turn of the thread on another instance, and only once", async () => {
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
    // A dies before its own timer could start: it hears that its hold was made only once B has ended the wait.
    const died = gate();
    const a = await instance("a", { holdReplies: died.opened });
    await instance("b", { sweepMs: 30 });
    const execution = held("a's run");
    a.hold(execution);
    await heldFor(a, execution.executionId);
    a.close();
    try {
      await expiries.next();
      expect(expiries.seen).toEqual([{ by: "b from ids", executionId: execution.executionId }]);
    } finally {
      died.open();
    }
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
    const down = createClient({ url: "redis://127.0.0.1:1/0", socket: { reconnectStrategy: false } });
    down.on("error", () => undefined);
    const grace = new RedisDisconnectGrace({
      redis: down,
      graceMs: WINDOW_MS,
      expireHeld: () => expiries.note("ids", "?"),
      prefix: PREFIX,
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
