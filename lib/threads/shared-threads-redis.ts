/**
 * What instances on one Redis share besides the thread store: the thread
 * status observers watch (`status-hub-redis.ts`) and the disconnect grace
 * window (`disconnect-grace-redis.ts`). Without Redis the app keeps both in
 * its process (`status-hub.ts`, `disconnect-grace.ts`).
 *
 * Its scripts go over the instance's Redis connection (`state/redis-connection.ts`,
 * which fails a command at once while Redis is away); the status channels
 * are listened to on a duplicate of it, as a subscribed connection can send
 * nothing else. Each call has a deadline (`commandTimeoutMs`), and the
 * duplicate is dropped at the end, not closed: a Redis that is up but
 * silent holds no request and no shutdown.
 */
import type { RedisClientType } from "redis";
import { errorFields, silentLogger, type Logger } from "../log.js";
import { DEFAULT_REDIS_COMMAND_TIMEOUT_MS } from "../state/redis-connection.js";
import type { DisconnectGrace } from "./disconnect-grace.js";
import { RedisDisconnectGrace, type HeldIds } from "./disconnect-grace-redis.js";
import type { ThreadStatusHub } from "./status-hub.js";
import { RedisThreadStatusHub } from "./status-hub-redis.js";

export interface SharedThreads {
  hub: ThreadStatusHub;
  /** The grace window of `graceMs`; `expireHeld` ends a wait that another instance started. */
  grace(graceMs: number, expireHeld: (held: HeldIds) => void): DisconnectGrace;
  close(): Promise<void>;
}

export interface RedisSharedThreadsOptions {
  /** The instance's connection; its duplicate listens to the channels. */
  client: RedisClientType;
  /** Prepended to every key and channel, as the thread store's keys are. */
  prefix?: string;
  /** Each Redis call's own deadline; the thread store's by default. */
  commandTimeoutMs?: number;
  log?: Logger;
}

export function redisSharedThreads({
  client,
  prefix,
  commandTimeoutMs = DEFAULT_REDIS_COMMAND_TIMEOUT_MS,
  log = silentLogger,
}: RedisSharedThreadsOptions): SharedThreads {
  const channels = client.duplicate();
  // It reconnects (and joins its channels again) by itself; meanwhile watchers show the stored state's status.
  let reported = false;
  channels.on("error", (error: unknown) => {
    if (!reported) log.warn(errorFields(error), "the Redis connection for thread status channels failed");
    reported = true;
  });
  channels.on("ready", () => (reported = false));
  channels.connect().catch((error: unknown) => log.warn(errorFields(error), "the Redis connection for thread status channels failed"));
  const hub = new RedisThreadStatusHub({ redis: client, channels, prefix, commandTimeoutMs, log });
  const graces: RedisDisconnectGrace[] = [];
  return {
    hub,
    grace(graceMs, expireHeld) {
      const grace = new RedisDisconnectGrace({ redis: client, graceMs, expireHeld, prefix, commandTimeoutMs, log });
      graces.push(grace);
      return grace;
    },
    async close() {
      graces.forEach((grace) => grace.close());
      // Dropped, not closed: a graceful close waits for every reply due, which a silent Redis never sends, and a
      // connection that only listens has nothing to finish (Redis ends its subscriptions as it goes).
      if (channels.isOpen) channels.destroy();
    },
  };
}
