/**
 * The disconnect grace window (`disconnect-grace.ts`, R-SIB-7) shared by
 * every instance on one Redis: a run on instance A whose client dropped is
 * held there, a client that comes back through instance B claims it, and
 * when the window runs out the task is cancelled once, by whichever
 * instance takes it first.
 *
 * A hold is a hash per execution (its thread and task, and how many
 * observers watch it), a member of the thread's set (a new turn gives up
 * on all of them) and a deadline in one sorted set: a window's end while
 * nobody watches; while someone does, a window past the claim, which the
 * claiming instance renews as long as its observer stays.
 * Every change is one script, timed by Redis's clock, so two instances
 * never disagree on whether a hold is due. Expiring is taking: the script
 * that finds a hold due deletes it and hands it to its caller, so the
 * task is cancelled exactly once.
 *
 * The instance that starts a wait times it; every instance also sweeps
 * what is due now and then, so a wait whose instance died still ends. The
 * instance that held the execution expires it with the run's own `expire`;
 * another uses `expireHeld`, which does the same from the hold's ids.
 *
 * So an observer whose instance dies while it watches stops renewing its
 * claim, and the wait ends `claimTtlMs` + `graceMs` after its last renewal.
 *
 * Each script has a deadline of its own (`commandTimeoutMs`): a Redis that
 * is up but silent answers nobody, and what it does once it answers again
 * is still seen to. A hold it does not confirm in time is cancelled at
 * once and withdrawn behind it; a claim is watched without, and given back
 * if Redis makes it late; a read a request needs (a new turn's take, the
 * question whether a wait is held) is STATE_UNAVAILABLE, and the holds a
 * late take took are still expired; renewals, give-backs and sweeps are
 * logged, and their late replies still acted on.
 */
import { AguiError } from "../errors.js";
import { errorFields, silentLogger, type Logger } from "../log.js";
import { DEFAULT_REDIS_COMMAND_TIMEOUT_MS, RedisDeadlineError, withDeadline } from "../state/redis-connection.js";
import type { DisconnectGrace, HeldExecution } from "./disconnect-grace.js";
import { logCancelFailure } from "./orphans.js";
import { runScript, sendScript, type RedisScripting } from "./redis-scripting.js";

/** A hold as any instance can expire it. */
export type HeldIds = Omit<HeldExecution, "expire">;

export interface RedisDisconnectGraceOptions {
  redis: RedisScripting;
  graceMs: number;
  /** Cancels the task and ends the execution of a hold another instance made. */
  expireHeld: (held: HeldIds) => void;
  /** Prepended to every key, so several services may share one Redis. */
  prefix?: string;
  /** How often this instance looks for waits that are over (those of instances that died); `graceMs` by default. */
  sweepMs?: number;
  /** How long a claim lasts unless its instance renews it (a third of it apart); 10 s by default. */
  claimTtlMs?: number;
  /** Each script's own deadline; the thread store's by default. */
  commandTimeoutMs?: number;
  log?: Logger;
}

const NOW_MS = `local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)`;

/** Deletes the hold of execution `id` everywhere; its ids, or nothing when it was gone already. */
const TAKE = `local function take(prefix, due, id)
  local key = prefix .. 'grace:' .. id
  local held = redis.call('HMGET', key, 'threadId', 'taskId')
  redis.call('DEL', key)
  redis.call('ZREM', due, id)
  if not held[1] then return nil end
  redis.call('SREM', prefix .. 'grace-thread:' .. held[1], id)
  return { id, held[1], held[2] }
end`;

// KEYS: the hold, the deadlines, the thread's set. ARGV: execution id, thread id, task id, grace ms.
const HOLD = `${NOW_MS}
redis.call('HSET', KEYS[1], 'threadId', ARGV[2], 'taskId', ARGV[3], 'observers', 0)
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[4]), ARGV[1])
redis.call('SADD', KEYS[3], ARGV[1])
return 1`;

// KEYS: the hold, the deadlines. ARGV: execution id, claim ttl + grace ms, 'new' or 'renewed'. 0 when nothing is held.
const CLAIM = `${NOW_MS}
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if ARGV[3] == 'new' then redis.call('HINCRBY', KEYS[1], 'observers', 1) end
local deadline = now + tonumber(ARGV[2])
local current = tonumber(redis.call('ZSCORE', KEYS[2], ARGV[1]) or '0')
if deadline > current then redis.call('ZADD', KEYS[2], deadline, ARGV[1]) end
return 1`;

const DEFAULT_CLAIM_TTL_MS = 10_000;

// KEYS: the hold, the deadlines. ARGV: execution id, settled, grace ms, prefix. The wait to time, or -1.
const UNCLAIM = `${NOW_MS}
${TAKE}
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
if ARGV[2] == '1' then
  take(ARGV[4], KEYS[2], ARGV[1])
  return -1
end
if redis.call('HINCRBY', KEYS[1], 'observers', -1) > 0 then return -1 end
redis.call('HSET', KEYS[1], 'observers', 0)
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[3]), ARGV[1])
return tonumber(ARGV[3])`;

// KEYS: the deadlines. ARGV: execution id, prefix. The hold when due, the time left when not, nothing when not waiting.
const TAKE_IF_DUE = `${NOW_MS}
${TAKE}
local deadline = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not deadline then return nil end
if tonumber(deadline) > now then return tonumber(deadline) - now end
return take(ARGV[2], KEYS[1], ARGV[1])`;

// KEYS: the deadlines. ARGV: prefix. Every hold due now, flattened.
const SWEEP = `${NOW_MS}
${TAKE}
local taken = {}
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, 100)) do
  local held = take(ARGV[1], KEYS[1], id)
  if held then for _, value in ipairs(held) do table.insert(taken, value) end end
end
return taken`;

// KEYS: the thread's set, the deadlines. ARGV: prefix. Every hold of the thread, flattened.
const TAKE_THREAD = `${TAKE}
local taken = {}
for _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local held = take(ARGV[1], KEYS[2], id)
  if held then for _, value in ipairs(held) do table.insert(taken, value) end end
end
redis.call('DEL', KEYS[1])
return taken`;

/** `expireHeld` as the service does it: what a run's own `expire` does (`cancellation.ts`), from the ids alone. */
export function expireHeldExecution({
  cancelTask,
  endExecution,
  log,
}: {
  cancelTask: (taskId: string) => Promise<unknown>;
  endExecution: (threadId: string, executionId: string) => Promise<void>;
  log: Logger;
}): (held: HeldIds) => void {
  return ({ threadId, executionId, taskId }) => {
    const heldLog = log.child({ threadId, executionId, taskId });
    void cancelTask(taskId).catch((error: unknown) => logCancelFailure(heldLog, taskId, error));
    void endExecution(threadId, executionId).catch((error: unknown) =>
      heldLog.warn(errorFields(error), "ending the execution after its grace window failed"),
    );
  };
}

function heldFrom(reply: unknown): HeldIds[] {
  const values = Array.isArray(reply) ? reply.map(String) : [];
  const held: HeldIds[] = [];
  for (let index = 0; index + 2 < values.length; index += 3)
    held.push({ executionId: values[index]!, threadId: values[index + 1]!, taskId: values[index + 2]! });
  return held;
}

export class RedisDisconnectGrace implements DisconnectGrace {
  readonly graceMs: number;
  readonly #redis: RedisScripting;
  readonly #expireHeld: (held: HeldIds) => void;
  readonly #prefix: string;
  readonly #log: Logger;
  readonly #claimTtlMs: number;
  readonly #commandTimeoutMs: number;
  /** The runs' own `expire` of the holds made here. */
  readonly #expires = new Map<string, () => void>();
  /** How many observers of this instance watch each execution: their claims are renewed while they do. */
  readonly #claims = new Map<string, number>();
  readonly #renewer: ReturnType<typeof setInterval> | undefined;
  readonly #timers = new Set<ReturnType<typeof setTimeout>>();
  readonly #sweeper: ReturnType<typeof setInterval> | undefined;

  constructor({
    redis,
    graceMs,
    expireHeld,
    prefix = "iac-code-agui:",
    sweepMs,
    claimTtlMs = DEFAULT_CLAIM_TTL_MS,
    commandTimeoutMs = DEFAULT_REDIS_COMMAND_TIMEOUT_MS,
    log = silentLogger,
  }: RedisDisconnectGraceOptions) {
    this.graceMs = graceMs;
    this.#claimTtlMs = claimTtlMs;
    this.#commandTimeoutMs = commandTimeoutMs;
    this.#redis = redis;
    this.#expireHeld = expireHeld;
    this.#prefix = prefix;
    this.#log = log;
    if (this.enabled) {
      this.#sweeper = setInterval(() => void this.#sweep(), sweepMs ?? Math.max(graceMs, 1000));
      this.#sweeper.unref?.();
      this.#renewer = setInterval(() => this.#renewClaims(), Math.max(1, Math.floor(claimTtlMs / 3)));
      this.#renewer.unref?.();
    }
  }

  get enabled(): boolean {
    return this.graceMs > 0;
  }

  #holdKey(executionId: string): string {
    return `${this.#prefix}grace:${executionId}`;
  }

  get #dueKey(): string {
    return `${this.#prefix}grace-due`;
  }

  hold({ expire, ...held }: HeldExecution): void {
    this.#expires.set(held.executionId, expire);
    runScript(
      this.#redis,
      HOLD,
      [this.#holdKey(held.executionId), this.#dueKey, `${this.#prefix}grace-thread:${held.threadId}`],
      [held.executionId, held.threadId, held.taskId, this.graceMs],
      this.#commandTimeoutMs,
    ).then(
      () => this.#arm(held.executionId, this.graceMs),
      (error: unknown) => {
        // No window without Redis: the client that left is treated as one that left for good.
        this.#log.warn({ ...errorFields(error), executionId: held.executionId }, "the grace window could not be shared: cancelling now");
        this.#expire(held);
        // A silent Redis may still make the hold: behind it on the connection, this takes it back.
        if (error instanceof RedisDeadlineError) this.#giveBack(held.executionId, true);
      },
    );
  }

  // With no window (graceMs 0, the default) nothing is ever held: no request pays a Redis round trip to learn that.
  async claim(executionId: string): Promise<boolean> {
    if (!this.enabled) return false;
    const claiming = this.#claim(executionId, "new");
    try {
      const claimed = (await withDeadline(claiming, this.#commandTimeoutMs)) === 1;
      if (claimed) this.#claims.set(executionId, (this.#claims.get(executionId) ?? 0) + 1);
      return claimed;
    } catch (error) {
      this.#log.warn({ ...errorFields(error), executionId }, "the grace window could not be claimed: watching without it");
      // Nobody here renews or gives back a claim Redis makes after its deadline: it is given back at once.
      claiming.then(
        (claimed) => claimed === 1 && this.#giveBack(executionId, false),
        () => undefined,
      );
      return false;
    }
  }

  /** The claim script as sent, with no deadline: its callers say what theirs means. */
  #claim(executionId: string, kind: "new" | "renewed"): Promise<unknown> {
    const keys = [this.#holdKey(executionId), this.#dueKey];
    return sendScript(this.#redis, CLAIM, keys, [executionId, this.#claimTtlMs + this.graceMs, kind]);
  }

  #renewClaims(): void {
    for (const executionId of this.#claims.keys()) {
      const renewing = this.#claim(executionId, "renewed");
      // A late reply still counts: a hold gone meanwhile is no longer renewed.
      renewing.then(
        (held) => held === 0 && this.#claims.delete(executionId),
        () => undefined,
      );
      withDeadline(renewing, this.#commandTimeoutMs).catch((error: unknown) =>
        this.#log.warn({ ...errorFields(error), executionId }, "a grace window claim could not be renewed"),
      );
    }
  }

  unclaim(executionId: string, settled: boolean): void {
    const watching = (this.#claims.get(executionId) ?? 1) - 1;
    if (watching > 0) this.#claims.set(executionId, watching);
    else this.#claims.delete(executionId);
    this.#giveBack(executionId, settled);
  }

  /** Gives a claim back to Redis, or with `settled` ends the hold; a late reply still times the wait it starts. */
  #giveBack(executionId: string, settled: boolean): void {
    const givingBack = sendScript(
      this.#redis,
      UNCLAIM,
      [this.#holdKey(executionId), this.#dueKey],
      [executionId, settled ? "1" : "0", this.graceMs, this.#prefix],
    );
    givingBack.then(
      (wait) => {
        if (settled) this.#expires.delete(executionId);
        if (typeof wait === "number" && wait >= 0) this.#arm(executionId, wait);
      },
      () => undefined,
    );
    withDeadline(givingBack, this.#commandTimeoutMs).catch((error: unknown) =>
      this.#log.warn({ ...errorFields(error), executionId }, "the grace window could not be given back"),
    );
  }

  async expireThread(threadId: string): Promise<void> {
    if (!this.enabled) return;
    // What the take takes is expired even when Redis answers past the deadline: nobody else will.
    const taking = sendScript(this.#redis, TAKE_THREAD, [`${this.#prefix}grace-thread:${threadId}`, this.#dueKey], [this.#prefix]).then(
      (taken) => heldFrom(taken).forEach((held) => this.#expire(held)),
    );
    await this.#shared(() => withDeadline(taking, this.#commandTimeoutMs), { threadId });
  }

  async holds(executionId: string): Promise<boolean> {
    if (!this.enabled) return false;
    const exists = await this.#shared(
      () => runScript(this.#redis, "return redis.call('EXISTS', KEYS[1])", [this.#holdKey(executionId)], [], this.#commandTimeoutMs),
      { executionId },
    );
    return exists === 1;
  }

  /** Stops this instance's timers; what it held stays in Redis for the other instances' sweeps. */
  close(): void {
    clearInterval(this.#sweeper);
    clearInterval(this.#renewer);
    this.#claims.clear();
    this.#timers.forEach((timer) => clearTimeout(timer));
    this.#timers.clear();
  }

  /** A read a request cannot go on without: Redis out of reach is the state out of reach. */
  async #shared(read: () => Promise<unknown>, ids: Record<string, string>): Promise<unknown> {
    try {
      return await read();
    } catch (error) {
      this.#log.warn({ ...errorFields(error), ...ids }, "the shared grace window could not be read");
      throw new AguiError("STATE_UNAVAILABLE", {}, { cause: error });
    }
  }

  #arm(executionId: string, waitMs: number): void {
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      void this.#takeIfDue(executionId);
    }, waitMs);
    timer.unref?.();
    this.#timers.add(timer);
  }

  async #takeIfDue(executionId: string): Promise<void> {
    // Acted on whenever Redis answers: a hold it took is expired by nobody else.
    const taking = sendScript(this.#redis, TAKE_IF_DUE, [this.#dueKey], [executionId, this.#prefix]).then((reply) => {
      if (typeof reply === "number") return this.#arm(executionId, reply);
      const [held] = heldFrom(reply);
      if (held) this.#expire(held);
      // Watched, or taken elsewhere: whoever ends the wait next expires it from its ids.
      else this.#expires.delete(executionId);
    });
    try {
      await withDeadline(taking, this.#commandTimeoutMs);
    } catch (error) {
      this.#log.warn({ ...errorFields(error), executionId }, "the grace window could not be checked: the sweep will");
    }
  }

  async #sweep(): Promise<void> {
    const sweeping = sendScript(this.#redis, SWEEP, [this.#dueKey], [this.#prefix]).then((taken) =>
      heldFrom(taken).forEach((held) => this.#expire(held)),
    );
    try {
      await withDeadline(sweeping, this.#commandTimeoutMs);
    } catch (error) {
      this.#log.warn(errorFields(error), "the grace windows could not be swept");
    }
  }

  #expire(held: HeldIds): void {
    const expire = this.#expires.get(held.executionId);
    this.#expires.delete(held.executionId);
    try {
      if (expire) expire();
      else this.#expireHeld(held);
    } catch (error) {
      this.#log.warn({ ...errorFields(error), executionId: held.executionId }, "expiring a grace window failed");
    }
  }
}
