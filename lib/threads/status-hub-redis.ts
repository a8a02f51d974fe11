/**
 * The thread status hub (`status-hub.ts`) shared by every instance on one
 * Redis: a run on instance A feeds it, an observer on instance B watches it.
 *
 * The instance running a thread's run folds the run's events into the
 * status, as the in-process hub does, and writes each new status to the
 * thread's status key and its channel in one script, stamped with a
 * sequence number that only grows per thread (Redis's clock in
 * microseconds, or one past the last one): Redis runs scripts one at a
 * time, so the key and the channel agree on the order.
 *
 * A watcher subscribes to the channel first and reads the key second. What
 * the channel brings before the key is read waits; the key's status is the
 * snapshot, and a published status goes on only when its number is past
 * the snapshot's. So nothing published after the watcher subscribed is
 * lost, and nothing the snapshot already covers is shown twice.
 *
 * The key lives while its run is active (a run that dies with its instance
 * leaves it for `activeTtlMs` at most) and goes with the run's end: a later
 * watcher starts from the thread's stored state, as it does in one process.
 * A Redis that cannot be reached costs observers their live status, never a
 * run: the run's writes are logged and dropped, a watcher shows the stored
 * state's status (at once when Redis refuses, after `commandTimeoutMs` when
 * it does not answer). A status published while a watcher's channel
 * was away is not sent again, but each status is the whole read-model: the
 * next one brings the watcher up to date.
 */
import { EventType, type AGUIEvent } from "@ag-ui/core";
import { Observable } from "rxjs";
import { errorFields, silentLogger, type Logger } from "../log.js";
import { DEFAULT_REDIS_COMMAND_TIMEOUT_MS, withDeadline } from "../state/redis-connection.js";
import { initialThreadStatus, reduceThreadStatus, type ThreadStatus } from "../model/thread-status.js";
import { runScript, type RedisChannels, type RedisScripting } from "./redis-scripting.js";
import type { ThreadStatusHub } from "./status-hub.js";

export interface RedisStatusHubOptions {
  /** Runs the scripts and reads the keys. */
  redis: RedisScripting;
  /** A connection of its own for the channels (`client.duplicate()`). */
  channels: RedisChannels;
  /** Prepended to every key and channel, so several services may share one Redis. */
  prefix?: string;
  /** How long an active run's status outlives its last event: a bound for one whose instance died. */
  activeTtlMs?: number;
  /** How long a watcher waits for its snapshot before it shows the stored state's status (observers wait on it). */
  snapshotTimeoutMs?: number;
  /** Each Redis call's own deadline (a script, a subscription, leaving a channel); the thread store's by default. */
  commandTimeoutMs?: number;
  log?: Logger;
}

/** A status as the key and the channel hold it: `<sequence> <json>`. */
interface Stamped {
  sequence: number;
  status: ThreadStatus;
}

const DEFAULT_ACTIVE_TTL_MS = 10 * 60_000;
/** Past the thread store's own command timeout (`state/redis-connection.ts`): a Redis that answers at all answers first. */
const DEFAULT_SNAPSHOT_TIMEOUT_MS = 3000;

// KEYS[1] the thread's status key; ARGV: the status JSON, whether its run is active, the key's time to live, the channel.
const PUBLISH_STATUS = `
local time = redis.call('TIME')
local sequence = tonumber(time[1]) * 1000000 + tonumber(time[2])
local previous = redis.call('GET', KEYS[1])
if previous then
  local last = tonumber(string.match(previous, '^(%d+) '))
  if last and last >= sequence then sequence = last + 1 end
end
local stamped = string.format('%.0f', sequence) .. ' ' .. ARGV[1]
if ARGV[2] == '1' then
  redis.call('SET', KEYS[1], stamped, 'PX', ARGV[3])
else
  redis.call('DEL', KEYS[1])
end
redis.call('PUBLISH', ARGV[4], stamped)
return stamped
`;

const READ_STATUS = "return redis.call('GET', KEYS[1])";

function parseStamped(text: string): Stamped {
  const space = text.indexOf(" ");
  return { sequence: Number(text.slice(0, space)), status: JSON.parse(text.slice(space + 1)) as ThreadStatus };
}

/**
 * One subscription per channel on the channel connection, however many
 * watchers share it: each watcher's listener joins once the subscription is
 * confirmed, so its key read always comes after.
 */
class ChannelListeners {
  readonly #channels = new Map<
    string,
    { listeners: Set<(message: string) => void>; dispatch: (message: string) => void; subscribed: Promise<void> }
  >();

  constructor(
    readonly connection: RedisChannels,
    readonly deadlineMs: number,
    readonly log: Logger,
  ) {}

  async add(channel: string, listener: (message: string) => void): Promise<void> {
    let entry = this.#channels.get(channel);
    if (!entry) {
      const listeners = new Set<(message: string) => void>();
      const dispatch = (message: string) => listeners.forEach((each) => each(message));
      const subscribing = this.connection.subscribe(channel, dispatch);
      const created = { listeners, dispatch, subscribed: withDeadline(subscribing, this.deadlineMs) };
      this.#channels.set(channel, created);
      // A channel that could not be joined is tried afresh by the next watcher; one Redis joins after its
      // deadline is left at once, or it would stay joined with nobody to leave it.
      created.subscribed.catch(() => {
        if (this.#channels.get(channel) === created) this.#channels.delete(channel);
        subscribing
          .then(
            () => withDeadline(this.connection.unsubscribe(channel, dispatch), this.deadlineMs),
            () => undefined,
          )
          .catch((error: unknown) => this.log.warn(errorFields(error), "leaving a thread status channel joined late failed"));
      });
      entry = created;
    }
    entry.listeners.add(listener);
    await entry.subscribed;
  }

  async remove(channel: string, listener: (message: string) => void): Promise<void> {
    const entry = this.#channels.get(channel);
    if (!entry?.listeners.delete(listener) || entry.listeners.size > 0) return;
    this.#channels.delete(channel);
    await entry.subscribed;
    await withDeadline(this.connection.unsubscribe(channel, entry.dispatch), this.deadlineMs);
  }

  get size(): number {
    return this.#channels.size;
  }
}

export class RedisThreadStatusHub implements ThreadStatusHub {
  readonly #redis: RedisScripting;
  readonly #channels: ChannelListeners;
  readonly #prefix: string;
  readonly #activeTtlMs: number;
  readonly #snapshotTimeoutMs: number;
  readonly #commandTimeoutMs: number;
  readonly #log: Logger;
  /** The status of each run this instance feeds, while it is active. */
  readonly #fed = new Map<string, ThreadStatus>();

  constructor({
    redis,
    channels,
    prefix = "iac-code-agui:",
    activeTtlMs = DEFAULT_ACTIVE_TTL_MS,
    snapshotTimeoutMs = DEFAULT_SNAPSHOT_TIMEOUT_MS,
    commandTimeoutMs = DEFAULT_REDIS_COMMAND_TIMEOUT_MS,
    log = silentLogger,
  }: RedisStatusHubOptions) {
    this.#snapshotTimeoutMs = snapshotTimeoutMs;
    this.#commandTimeoutMs = commandTimeoutMs;
    this.#redis = redis;
    this.#channels = new ChannelListeners(channels, commandTimeoutMs, log);
    this.#prefix = prefix;
    this.#activeTtlMs = activeTtlMs;
    this.#log = log;
  }

  #key(threadId: string): string {
    return `${this.#prefix}status:${threadId}`;
  }

  #channel(threadId: string): string {
    return `${this.#prefix}status-changes:${threadId}`;
  }

  record(threadId: string, event: AGUIEvent, seed: () => ThreadStatus = () => initialThreadStatus(threadId)): void {
    const current = this.#fed.get(threadId) ?? (event.type === EventType.RUN_STARTED ? seed() : undefined);
    if (!current) return;
    const next = reduceThreadStatus(current, event);
    if (next.runActive) this.#fed.set(threadId, next);
    else this.#fed.delete(threadId);
    if (next === current) return;
    // Sent in the order recorded: one connection keeps its commands in order, and the script numbers them there.
    // Best effort past its deadline too: a status that lands late is still in order, and the next one is the whole read-model.
    runScript(
      this.#redis,
      PUBLISH_STATUS,
      [this.#key(threadId)],
      [JSON.stringify(next), next.runActive ? "1" : "0", this.#activeTtlMs, this.#channel(threadId)],
      this.#commandTimeoutMs,
    ).catch((error: unknown) =>
      this.#log.warn({ ...errorFields(error), threadId, eventType: event.type }, "the shared thread status could not be written"),
    );
  }

  watch(threadId: string, seed: () => ThreadStatus): Observable<ThreadStatus> {
    return new Observable<ThreadStatus>((subscriber) => {
      let shown = -1;
      // Until the snapshot is read, what the channel brings waits here.
      let waiting: Stamped[] | undefined = [];
      const show = ({ sequence, status }: Stamped) => {
        if (sequence <= shown) return;
        shown = sequence;
        subscriber.next(status);
      };
      const listener = (message: string) => {
        const stamped = parseStamped(message);
        if (waiting) waiting.push(stamped);
        else show(stamped);
      };
      // Out once: the snapshot read, or the stored state's status when Redis does not answer in time. A watcher
      // then goes on with what the channel brings, if it can: every status published is newer than a stored state.
      const snapshotOut = (snapshot: Stamped) => {
        clearTimeout(deadline);
        if (subscriber.closed) return;
        show(snapshot);
        const early = waiting ?? [];
        waiting = undefined;
        early.forEach(show);
      };
      const storedStateInstead = (error: unknown) => {
        this.#log.warn({ ...errorFields(error), threadId }, "the shared thread status could not be read: showing the stored state's");
        snapshotOut({ sequence: 0, status: seed() });
      };
      const deadline = setTimeout(() => storedStateInstead(new Error("no answer in time")), this.#snapshotTimeoutMs);
      const channel = this.#channel(threadId);
      this.#channels
        .add(channel, listener)
        .then(() => runScript(this.#redis, READ_STATUS, [this.#key(threadId)], [], this.#commandTimeoutMs))
        .then(
          (stored) => snapshotOut(typeof stored === "string" ? parseStamped(stored) : { sequence: 0, status: seed() }),
          storedStateInstead,
        )
        .catch((error: unknown) => subscriber.error(error));
      return () => {
        clearTimeout(deadline);
        this.#channels
          .remove(channel, listener)
          .catch((error: unknown) => this.#log.warn({ ...errorFields(error), threadId }, "leaving a thread status channel failed"));
      };
    });
  }

  /** Threads this instance feeds or watches now: tests check it does not grow with idle threads. */
  get size(): number {
    return this.#fed.size + this.#channels.size;
  }
}
