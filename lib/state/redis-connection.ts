/**
 * The one Redis connection of an instance (node-redis), set up for a
 * service that must answer while Redis is away: a command fails at once
 * while the connection is down (no offline queue, which would hold a
 * request until Redis returns), the connection is tried again and again
 * (every second at most) for as long as the instance lives, and one warning
 * is logged per outage, not one per attempt. The URL is never logged: it
 * may carry a password. A Redis that is up but does not answer (stopped,
 * paused, cut off without a reset) is what `withDeadline` is for: node-redis
 * times a command out only until it is written.
 */
import { createClient, type RedisClientType } from "redis";
import { errorFields, silentLogger, type Logger } from "../log.js";

/** Long enough for a 4 MiB state on a loaded machine, short enough that a hung Redis is a quick 503. */
export const DEFAULT_REDIS_COMMAND_TIMEOUT_MS = 2000;
/** How long a start waits for Redis before it serves anyway (503 STATE_UNAVAILABLE until Redis answers). */
export const REDIS_START_WAIT_MS = 5000;
const MAX_RECONNECT_DELAY_MS = 1000;

export type RedisClient = RedisClientType;

export class RedisDeadlineError extends Error {
  override name = "RedisDeadlineError";
}

/**
 * `command`, or a RedisDeadlineError once `ms` have passed without its
 * answer. The command stays queued on the connection, so a late answer
 * still goes to it and never to a later command; a write that was sent may
 * still be applied when Redis answers again (a fenced save only under its
 * lease, which it then still holds).
 */
export function withDeadline<T>(command: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new RedisDeadlineError(`Redis did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([command, late]).finally(() => clearTimeout(timer));
}

export interface RedisConnectionOptions {
  log?: Logger;
  commandTimeoutMs?: number;
  /** How long `connectRedis` waits for the first connection; default REDIS_START_WAIT_MS. */
  startWaitMs?: number;
}

export interface RedisConnection {
  client: RedisClient;
  /** Closes the connection: gracefully when Redis answers, at once when it does not (within the command deadline). */
  close(): Promise<void>;
}

/** Delays 50, 100, 200 … ms between attempts, never more than a second: Redis back means service back within a second. */
export const reconnectDelay = (retries: number): number => Math.min(50 * 2 ** Math.min(retries, 10), MAX_RECONNECT_DELAY_MS);

export async function connectRedis(url: string, options: RedisConnectionOptions = {}): Promise<RedisConnection> {
  const log = options.log ?? silentLogger;
  const commandTimeoutMs = options.commandTimeoutMs ?? DEFAULT_REDIS_COMMAND_TIMEOUT_MS;
  const client: RedisClient = createClient({
    url,
    disableOfflineQueue: true,
    commandOptions: { timeout: commandTimeoutMs },
    socket: { connectTimeout: commandTimeoutMs, reconnectStrategy: reconnectDelay },
  });
  let reachable: boolean | undefined;
  // Without an "error" listener node-redis would throw each failed attempt at the process.
  client.on("error", (error: unknown) => {
    if (reachable === false) return;
    reachable = false;
    log.warn(
      { ...errorFields(error) },
      "Redis cannot be reached: requests that need thread state get 503 STATE_UNAVAILABLE until it answers again",
    );
  });
  client.on("ready", () => {
    if (reachable === false) log.info("Redis answers again");
    reachable = true;
  });

  const connecting = client.connect().then(
    () => true,
    (error: unknown) => {
      log.error({ ...errorFields(error) }, "Redis: gave up connecting");
      return false;
    },
  );
  let waited: NodeJS.Timeout | undefined;
  const connected = await Promise.race([
    connecting,
    new Promise<false>((resolve) => (waited = setTimeout(() => resolve(false), options.startWaitMs ?? REDIS_START_WAIT_MS))),
  ]);
  clearTimeout(waited);
  if (!connected) log.warn("Redis does not answer yet: serving anyway, with 503 STATE_UNAVAILABLE for requests that need thread state");

  return {
    client,
    async close() {
      if (!client.isOpen) return;
      // A graceful close waits for every reply due, which a silent Redis never sends. Replies come in order, so
      // a PING answered in time means the rest are in too; one that is not answered drops the connection.
      const answers =
        client.isReady &&
        (await withDeadline(client.ping(), commandTimeoutMs).then(
          () => true,
          () => false,
        ));
      if (answers) await client.close();
      else if (client.isOpen) client.destroy();
    },
  };
}
