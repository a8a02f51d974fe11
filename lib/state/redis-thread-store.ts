/**
 * Thread state in Redis, shared by every instance of the service
 * (`IAC_CODE_AGUI_REDIS_URL`). Per thread, named by the thread's file stem
 * (`thread-file-stem.ts`: bounded, injective, no lone surrogates):
 *
 * - `<prefix>thread:{<stem>}`, a hash: `state`, the same document the file
 *   store writes (same projection, schema and size cap), and `leases`, the
 *   count of leases ever taken on the thread, which is the fencing token.
 *   A hash that never got a state expires a day after its last lease. With
 *   a retention (`IAC_CODE_AGUI_THREAD_RETENTION_S`), each save sets the
 *   hash to expire that long after it (later while a pending interrupt
 *   waits, never while one waits with no expiry), and each lease taken or
 *   renewed puts that expiry off by at least the retention: a thread with a
 *   run never expires under it.
 * - `<prefix>lease:{<stem>}`: the token of the lease that holds the thread,
 *   expiring after the lease TTL unless its holder renews it (every third
 *   of the TTL). A dead instance blocks its threads for at most one TTL.
 *
 *   The hash also keeps `savedAt`, the time of the last save in ms, for a
 *   list of threads (`listThreads`, which SCANs for the hashes).
 *
 * Every change is one Lua script, so nothing is read, decided and written
 * back by the instance (no read-modify-write race between instances), and a
 * save under a lease writes only while that lease's token is the one in the
 * lease key: a holder whose lease expired and was taken cannot overwrite
 * the new holder's state. A load reads the one field it returns. The `{}`
 * around the stem keep a thread's two keys in one cluster slot.
 */
import { RESP_TYPES } from "redis";
import { silentLogger, type Logger } from "../log.js";
import { DEFAULT_LEASE_TTL_MS } from "./lease-ttl.js";
import { threadFileStem } from "./thread-file-stem.js";
import { MAX_THREAD_STATE_BYTES, bytesAsState, checkSavable, documentText } from "./thread-state-codec.js";
import type { ThreadState } from "./thread-state.js";
import { keptUntilMs } from "./thread-retention.js";
import { MAX_THREADS_SCANNED, newestFirst, summaryOf, type ThreadSummary } from "./thread-listing.js";
import { StatePersistenceError, StateUnavailableError, type SaveOptions, type ThreadLease, type ThreadStore } from "./thread-store.js";
import { DEFAULT_REDIS_COMMAND_TIMEOUT_MS, withDeadline, type RedisClient } from "./redis-connection.js";

export const DEFAULT_KEY_PREFIX = "iac-code-agui:";
/**
 * A thread leased but never written (a resume of an unknown thread, say)
 * keeps only its lease count, for this long after its last lease: no key
 * is left behind for good by requests that stored nothing. Far longer than
 * any lease lives, so a token is never handed out twice while it could matter.
 */
export const UNWRITTEN_THREAD_KEPT_MS = 24 * 60 * 60 * 1000;

/** KEYS: thread hash. ARGV: size cap. An integer reply is a state larger than the cap (not read); nil, no state. */
const LOAD = `
local size = redis.call('HSTRLEN', KEYS[1], 'state')
if size > tonumber(ARGV[1]) then return size end
return redis.call('HGET', KEYS[1], 'state')`;

/**
 * Puts off the expiry of a thread hash (KEYS[1]) that has one to at least
 * ARGV[n] ms from now ('' for no retention); a hash kept for good stays so.
 */
const PUT_OFF_EXPIRY = `
local function putOffExpiry(retention)
  if retention == '' then return end
  local left = redis.call('PTTL', KEYS[1])
  if left >= 0 and left < tonumber(retention) then redis.call('PEXPIRE', KEYS[1], retention) end
end`;

/**
 * KEYS: thread hash, lease key. ARGV: TTL ms, how long a hash with no state
 * is kept, retention ms or ''. 0 when the thread is held, else the new lease's token.
 */
const ACQUIRE = `${PUT_OFF_EXPIRY}
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
local token = redis.call('HINCRBY', KEYS[1], 'leases', 1)
if redis.call('HEXISTS', KEYS[1], 'state') == 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) else putOffExpiry(ARGV[3]) end
redis.call('SET', KEYS[2], token, 'PX', ARGV[1])
return token`;

/** KEYS: thread hash, lease key. ARGV: token, TTL ms, retention ms or ''. 1 when the lease still held the thread and was extended. */
const RENEW = `${PUT_OFF_EXPIRY}
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
if redis.call('HEXISTS', KEYS[1], 'state') == 1 then putOffExpiry(ARGV[3]) end
return redis.call('PEXPIRE', KEYS[2], ARGV[2])`;

/** KEYS: lease key. ARGV: token. Deletes the lease only while it is this token's. */
const RELEASE = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
return redis.call('DEL', KEYS[1])`;

/**
 * KEYS: thread hash, lease key. ARGV: document, token ('' for an unfenced
 * write), how long the thread is kept in ms ('' for good), the time now in
 * ms. 0 when the token no longer holds the thread.
 */
const SAVE = `
if ARGV[2] ~= '' and redis.call('GET', KEYS[2]) ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], 'state', ARGV[1], 'savedAt', ARGV[4])
if ARGV[3] == '' then redis.call('PERSIST', KEYS[1]) else redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
return 1`;

/** Runs `renew` every `everyMs` until the returned function is called. */
export type RenewalSchedule = (renew: () => void, everyMs: number) => () => void;

const everyInterval: RenewalSchedule = (renew, everyMs) => {
  const timer = setInterval(renew, everyMs);
  // A lease never keeps the process alive: a process that is leaving lets its leases expire.
  timer.unref();
  return () => clearInterval(timer);
};

export interface RedisThreadStoreOptions {
  client: RedisClient;
  /** How long a lease lasts without renewal; renewed every third of it. Default `DEFAULT_LEASE_TTL_MS`. */
  leaseTtlMs?: number;
  /** Prepended to every key; default `iac-code-agui:`. Tests give each store its own. */
  keyPrefix?: string;
  log?: Logger;
  /** How long a command may wait for Redis's answer before it fails; default `DEFAULT_REDIS_COMMAND_TIMEOUT_MS`. */
  commandTimeoutMs?: number;
  /** Tests: when renewals run (default: a timer every third of the TTL). */
  renewalSchedule?: RenewalSchedule;
  /** How long a thread is kept after its last save, in ms (see `thread-retention.ts`); 0 or unset, for good. */
  retentionMs?: number;
  /** Tests: the clock a pending interrupt's expiry is compared with (default `Date.now`). */
  now?: () => number;
}

export class RedisThreadStore implements ThreadStore {
  readonly shared = true;
  readonly leaseTtlMs: number;
  readonly keyPrefix: string;
  /** 0: threads are kept for good. */
  readonly retentionMs: number;
  readonly #now: () => number;
  readonly #client: RedisClient;
  /** The same connection, answering strings as bytes: a load decodes them itself, refusing invalid UTF-8. */
  readonly #bytes;
  readonly #log: Logger;
  readonly #commandTimeoutMs: number;
  readonly #schedule: RenewalSchedule;
  /** Renewals of leases this store handed out and that were not released: stopped on close. */
  readonly #renewals = new Set<() => void>();

  constructor(options: RedisThreadStoreOptions) {
    this.#client = options.client;
    this.#bytes = options.client.withTypeMapping({ [RESP_TYPES.BLOB_STRING]: Buffer });
    this.leaseTtlMs = options.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS;
    this.keyPrefix = options.keyPrefix ?? DEFAULT_KEY_PREFIX;
    this.#log = options.log ?? silentLogger;
    this.#commandTimeoutMs = options.commandTimeoutMs ?? DEFAULT_REDIS_COMMAND_TIMEOUT_MS;
    this.#schedule = options.renewalSchedule ?? everyInterval;
    this.retentionMs = Math.max(0, options.retentionMs ?? 0);
    this.#now = options.now ?? Date.now;
  }

  /** The retention as a script argument: '' when there is none. */
  get #retentionArgument(): string {
    return this.retentionMs > 0 ? String(this.retentionMs) : "";
  }

  /** The hash holding a thread's state and lease count. */
  threadKey(threadId: string): string {
    return `${this.keyPrefix}thread:{${threadFileStem(threadId)}}`;
  }

  /** The key whose presence is the thread's lease. */
  leaseKey(threadId: string): string {
    return `${this.keyPrefix}lease:{${threadFileStem(threadId)}}`;
  }

  async load(threadId: string): Promise<ThreadState | undefined> {
    const key = this.#keyOrFail(threadId, StateUnavailableError);
    let reply: unknown;
    try {
      reply = await this.#answer(this.#bytes.eval(LOAD, { keys: [key], arguments: [String(MAX_THREAD_STATE_BYTES)] }));
    } catch (error) {
      throw new StateUnavailableError(`thread state ${key}: ${unreachable(error)}`, { cause: error });
    }
    if (reply === null || reply === undefined) return undefined;
    if (typeof reply === "number") throw new StateUnavailableError(`thread state ${key}: is larger than ${MAX_THREAD_STATE_BYTES} bytes`);
    if (!Buffer.isBuffer(reply)) throw new StateUnavailableError(`thread state ${key}: is not a string`);
    return bytesAsState(reply, threadId, key);
  }

  async save(state: ThreadState, lease?: ThreadLease, { after }: SaveOptions = {}): Promise<void> {
    checkSavable(state);
    const { threadId } = state;
    const key = this.#keyOrFail(threadId, StatePersistenceError);
    const text = documentText(state, key);
    if (lease !== undefined && lease.threadId !== threadId)
      throw new StatePersistenceError(`thread state ${key}: refused, written under the lease of another thread`);
    // One round trip is all a write is here: there is nothing to prepare while `after` goes on.
    await after;
    const now = this.#now();
    const keptUntil = keptUntilMs(state, now, this.retentionMs);
    const keptFor = keptUntil === Infinity ? "" : String(Math.max(1, Math.ceil(keptUntil - now)));
    let written: unknown;
    try {
      // EVAL, not EVALSHA with a fallback: a retry after NOSCRIPT (Redis restarted) could land after a later save.
      written = await this.#answer(
        this.#client.eval(SAVE, {
          keys: [key, this.leaseKey(threadId)],
          arguments: [text, lease === undefined ? "" : String(lease.token), keptFor, String(now)],
        }),
      );
    } catch (error) {
      throw new StatePersistenceError(`thread state ${key}: ${unreachable(error)}`, { cause: error });
    }
    if (written !== 1)
      throw new StatePersistenceError(`thread state ${key}: refused, the lease it was written under no longer holds the thread`);
  }

  async tryAcquire(threadId: string): Promise<ThreadLease | undefined> {
    const key = this.#keyOrFail(threadId, StateUnavailableError);
    const leaseKey = this.leaseKey(threadId);
    let token: unknown;
    try {
      token = await this.#answer(
        this.#client.eval(ACQUIRE, {
          keys: [key, leaseKey],
          arguments: [String(this.leaseTtlMs), String(Math.max(UNWRITTEN_THREAD_KEPT_MS, 100 * this.leaseTtlMs)), this.#retentionArgument],
        }),
      );
    } catch (error) {
      throw new StateUnavailableError(`thread lease ${leaseKey}: ${unreachable(error)}`, { cause: error });
    }
    if (typeof token !== "number" || token === 0) return undefined;
    return this.#lease(threadId, key, leaseKey, token);
  }

  /**
   * SCANs for thread hashes (never KEYS, which blocks Redis), at most
   * `MAX_THREADS_SCANNED` of them, and reads the states of the newest
   * `limit` by their `savedAt`. A hash that is not a readable state of the
   * thread its key is made from is left out.
   */
  async listThreads(limit: number): Promise<ThreadSummary[]> {
    // A prefix's glob characters are matched as themselves; the key check in #summaryAt is the last word anyway.
    const match = `${this.keyPrefix.replace(/[*?[\]\\]/g, "\\$&")}thread:*`;
    try {
      const keys: string[] = [];
      let cursor = "0";
      do {
        const reply = await this.#answer(this.#client.scan(cursor, { MATCH: match, COUNT: 500 }));
        cursor = String(reply.cursor);
        keys.push(...reply.keys.slice(0, MAX_THREADS_SCANNED - keys.length));
      } while (cursor !== "0" && keys.length < MAX_THREADS_SCANNED);
      const savedAt = await Promise.all(keys.map((key) => this.#answer(this.#client.hGet(key, "savedAt"))));
      const newest = newestFirst(
        keys.map((name, at) => ({ name, updatedAt: Number(savedAt[at] ?? 0) || 0 })),
        limit,
      );
      const summaries = await Promise.all(newest.map(({ name, updatedAt }) => this.#summaryAt(name, updatedAt)));
      return summaries.filter((summary) => summary !== undefined);
    } catch (error) {
      throw new StateUnavailableError(`thread list: ${unreachable(error)}`, { cause: error });
    }
  }

  async #summaryAt(key: string, updatedAt: number): Promise<ThreadSummary | undefined> {
    const bytes = await this.#answer(this.#bytes.hGet(key, "state"));
    if (!Buffer.isBuffer(bytes) || bytes.byteLength > MAX_THREAD_STATE_BYTES) return undefined;
    let state: ThreadState;
    try {
      const threadId: unknown = (JSON.parse(bytes.toString("utf8")) as { threadId?: unknown }).threadId;
      if (typeof threadId !== "string" || this.threadKey(threadId) !== key) return undefined;
      state = bytesAsState(bytes, threadId, key);
    } catch {
      return undefined;
    }
    const held = await this.#answer(this.#client.exists(this.leaseKey(state.threadId)));
    return summaryOf(state, updatedAt, held === 1);
  }

  async available(): Promise<boolean> {
    if (!this.#client.isReady) return false;
    try {
      return (await this.#answer(this.#client.ping())) === "PONG";
    } catch {
      return false;
    }
  }

  /** Stops renewing the leases still held (they expire); the connection is its owner's to close. */
  async close(): Promise<void> {
    for (const stop of this.#renewals) stop();
    this.#renewals.clear();
  }

  #lease(threadId: string, threadKey: string, leaseKey: string, token: number): ThreadLease {
    const client = this.#client;
    const answer = <T>(command: Promise<T>) => this.#answer(command);
    const renewals = this.#renewals;
    const log = this.#log;
    const ttl = String(this.leaseTtlMs);
    const retention = this.#retentionArgument;
    let renewing: Promise<unknown> | undefined;
    let stopRenewing = () => {};
    const stop = () => {
      stopRenewing();
      renewals.delete(stop);
    };
    const renew = () => {
      // One renewal at a time: a slow Redis does not pile them up.
      renewing ??= answer(client.eval(RENEW, { keys: [threadKey, leaseKey], arguments: [String(token), ttl, retention] }))
        .then(
          (extended) => {
            if (extended === 1) return;
            stop();
            log.warn({ leaseKey, token }, "a run's lease on its thread expired before it was renewed; its writes are refused from now on");
          },
          // Redis away: tried again next time; if it stays away past the TTL the lease is lost and the writes refused.
          (error: unknown) => log.debug({ err: error, leaseKey }, "lease renewal failed"),
        )
        .finally(() => (renewing = undefined));
    };
    stopRenewing = this.#schedule(renew, Math.max(1, Math.floor(this.leaseTtlMs / 3)));
    renewals.add(stop);
    return Object.freeze({
      threadId,
      token,
      release: async () => {
        stop();
        try {
          await answer(client.eval(RELEASE, { keys: [leaseKey], arguments: [String(token)] }));
        } catch (error) {
          // Unreachable: the lease expires by itself within the TTL.
          log.warn({ err: error, leaseKey }, "a lease could not be released; it expires by itself");
        }
      },
    });
  }

  /** A command's answer, or a failure once Redis has not answered within the command timeout. */
  #answer<T>(command: Promise<T>): Promise<T> {
    return withDeadline(command, this.#commandTimeoutMs);
  }

  /** An id without a stem (see threadFileStem) fails as the operation's own error type. */
  #keyOrFail(threadId: string, Failure: new (message: string) => Error): string {
    try {
      return this.threadKey(threadId);
    } catch (error) {
      throw new Failure(`thread state: ${(error as Error).message}`);
    }
  }
}

/** What the message says of a failed command: the kind of failure, never the URL or the data. */
function unreachable(error: unknown): string {
  const name = error instanceof Error ? error.name : "error";
  return `the Redis store could not be reached or refused the command (${name})`;
}
