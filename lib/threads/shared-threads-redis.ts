/**
 * What instances on one Redis share besides the thread store: the thread
 * status observers watch (`status-hub-redis.ts`) and the disconnect grace
 * window (`disconnect-grace-redis.ts`). Without Redis the app keeps both in
 * its process (`status-hub.ts`, `disconnect-grace.ts`).
 *
 * It has two connections of its own: one for scripts, and one that only
 * listens to status channels, as a subscribed connection must.
 */
import { createClient } from "redis";
import { errorFields, silentLogger, type Logger } from "../log.js";
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
  url: string;
  /** Prepended to every key and channel. */
  prefix?: string;
  log?: Logger;
}

export async function redisSharedThreads({ url, prefix, log = silentLogger }: RedisSharedThreadsOptions): Promise<SharedThreads> {
  const redis = createClient({ url });
  const channels = redis.duplicate();
  // node-redis reconnects by itself; until then what needs Redis fails and says so where it is used.
  let reported = false;
  for (const connection of [redis, channels])
    connection.on("error", (error: unknown) => {
      if (!reported) log.warn(errorFields(error), "the connection to Redis for thread status and grace windows failed");
      reported = true;
    });
  redis.on("ready", () => (reported = false));
  await Promise.all([redis.connect(), channels.connect()]);
  const hub = new RedisThreadStatusHub({ redis, channels, prefix, log });
  const graces: RedisDisconnectGrace[] = [];
  return {
    hub,
    grace(graceMs, expireHeld) {
      const grace = new RedisDisconnectGrace({ redis, graceMs, expireHeld, prefix, log });
      graces.push(grace);
      return grace;
    },
    async close() {
      graces.forEach((grace) => grace.close());
      await Promise.allSettled([redis.close(), channels.close()]);
    },
  };
}
