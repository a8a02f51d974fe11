/**
 * How many runs go at once: at most `maxActiveRuns` in this
 * instance (`IAC_CODE_AGUI_MAX_ACTIVE_RUNS`) and `maxRunsPerUser` for one
 * `iacCode.userId` (`IAC_CODE_AGUI_MAX_RUNS_PER_USER`), counted across
 * every instance on the same Redis when there is one. A run past either is
 * refused with 429 `TOO_MANY_RUNS` and a Retry-After before the kernel
 * hears of it. A slot is held from admission until the run's connection
 * closes, so a resume of a paused run takes one like a new turn.
 *
 * Across instances, each user's runs are one Redis sorted set, a member per
 * run whose score is when it lapses (by Redis's clock): taken and checked
 * in one script, renewed every third of `ttlMs` while the run lives, removed
 * when it ends. A run of an instance that died lapses after `ttlMs`, so a
 * dead instance holds a user's slots no longer than it holds a thread's
 * lease.
 */
import { randomUUID } from "node:crypto";
import { AguiError } from "../errors.js";
import type { Logger } from "../log.js";
import { runScript, type RedisScripting } from "../threads/redis-scripting.js";
import { DEFAULT_REDIS_COMMAND_TIMEOUT_MS } from "../state/redis-connection.js";

/** When a refused client should try again: runs end in seconds to minutes, so a few seconds, not a guess at which. */
export const TOO_MANY_RUNS_RETRY_AFTER_S = 5;

export type SlotLimit = "instance" | "user";

export interface RunSlotLimits {
  maxActiveRuns?: number | undefined;
  maxRunsPerUser?: number | undefined;
}

/** Per user, across instances: what `RunSlots` asks of Redis. */
export interface SharedUserRuns {
  /** True when the run took a slot (`token` names it); false when the user had `max` already. */
  take(userId: string, token: string, max: number): Promise<boolean>;
  renew(userId: string, token: string): Promise<void>;
  release(userId: string, token: string): Promise<void>;
  /** How often a taken slot must be renewed. */
  readonly renewEveryMs: number;
}

export class RunSlots {
  #active = 0;
  readonly #perUser = new Map<string, number>();

  constructor(
    private readonly limits: RunSlotLimits,
    private readonly options: { shared?: SharedUserRuns | undefined; log?: Logger; onRefused?: (limit: SlotLimit) => void } = {},
  ) {}

  /** Runs holding a slot in this instance now. */
  get active(): number {
    return this.#active;
  }

  /** A slot for a run of `userId`, or `TOO_MANY_RUNS`; the returned function gives it back (once, however often called). */
  async take(userId: string | undefined): Promise<() => void> {
    const { maxActiveRuns, maxRunsPerUser } = this.limits;
    if (maxActiveRuns !== undefined && this.#active >= maxActiveRuns) this.#refuse("instance", maxActiveRuns);
    // Counted before any await, so two runs arriving together cannot both take the last slot.
    this.#active++;
    let releaseUser: (() => void) | undefined;
    try {
      if (maxRunsPerUser !== undefined && userId !== undefined) releaseUser = await this.#takeForUser(userId, maxRunsPerUser);
    } catch (error) {
      this.#active--;
      throw error;
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#active--;
      releaseUser?.();
    };
  }

  async #takeForUser(userId: string, max: number): Promise<() => void> {
    const { shared } = this.options;
    if (shared === undefined) {
      const held = this.#perUser.get(userId) ?? 0;
      if (held >= max) this.#refuse("user", max);
      this.#perUser.set(userId, held + 1);
      return () => {
        const left = (this.#perUser.get(userId) ?? 1) - 1;
        if (left > 0) this.#perUser.set(userId, left);
        else this.#perUser.delete(userId);
      };
    }
    const token = randomUUID();
    // Redis down or silent: the count cannot be kept, so the run is refused as every request needing Redis is.
    const taken = await shared.take(userId, token, max).catch((error: unknown) => {
      throw new AguiError("STATE_UNAVAILABLE", {}, { cause: error });
    });
    if (!taken) this.#refuse("user", max);
    const renewal = setInterval(() => {
      shared
        .renew(userId, token)
        .catch((error: unknown) => this.options.log?.warn({ err: error }, "a run's per-user slot was not renewed"));
    }, shared.renewEveryMs);
    renewal.unref();
    return () => {
      clearInterval(renewal);
      // Not awaited: the run has ended; a slot that is not removed lapses by itself.
      shared
        .release(userId, token)
        .catch((error: unknown) => this.options.log?.warn({ err: error }, "a run's per-user slot was not given back"));
    };
  }

  #refuse(limit: SlotLimit, max: number): never {
    this.options.onRefused?.(limit);
    throw new AguiError("TOO_MANY_RUNS", { reason: limit, limit: max }, { retryAfterS: TOO_MANY_RUNS_RETRY_AFTER_S, details: { limit } });
  }
}

/** Drops the lapsed members, then adds this run's unless the user has `max` already; 1 taken, 0 refused. */
const TAKE = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local ttl = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
redis.call('PEXPIRE', KEYS[1], ttl)
return 1
`;

/** Pushes this run's lapse back by `ttl`, if it is still there (a run whose slot lapsed does not take it back). */
const RENEW = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local ttl = tonumber(ARGV[2])
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  redis.call('ZADD', KEYS[1], 'XX', now + ttl, ARGV[1])
  redis.call('PEXPIRE', KEYS[1], ttl)
end
return 1
`;

const RELEASE = `return redis.call('ZREM', KEYS[1], ARGV[1])`;

export interface RedisUserRunsOptions {
  client: RedisScripting;
  /** How long a run's slot lasts unrenewed: the lease TTL, so a dead instance frees both at once. */
  ttlMs: number;
  prefix?: string;
  commandTimeoutMs?: number;
}

export function redisUserRuns({
  client,
  ttlMs,
  prefix = "iac-code-agui:",
  commandTimeoutMs = DEFAULT_REDIS_COMMAND_TIMEOUT_MS,
}: RedisUserRunsOptions): SharedUserRuns {
  const key = (userId: string) => `${prefix}user-runs:${userId}`;
  return {
    renewEveryMs: Math.max(1, Math.floor(ttlMs / 3)),
    take: async (userId, token, max) => (await runScript(client, TAKE, [key(userId)], [token, ttlMs, max], commandTimeoutMs)) === 1,
    renew: async (userId, token) => void (await runScript(client, RENEW, [key(userId)], [token, ttlMs], commandTimeoutMs)),
    release: async (userId, token) => void (await runScript(client, RELEASE, [key(userId)], [token], commandTimeoutMs)),
  };
}
