/**
 * The thread store the configuration asks for: Redis, shared by every
 * instance, when `IAC_CODE_AGUI_REDIS_URL` is set; else the file store
 * under the state directory, as `npm start` has always used. Either keeps
 * an idle thread for `IAC_CODE_AGUI_THREAD_RETENTION_S` (see
 * `thread-retention.ts`): the file store sweeps, Redis expires.
 */
import type { Config } from "../config.js";
import { silentLogger, type Logger } from "../log.js";
import { FileThreadStore } from "./file-thread-store.js";
import { FileThreadSweeper } from "./file-thread-sweeper.js";
import { connectRedis, type RedisConnection } from "./redis-connection.js";
import { RedisThreadStore } from "./redis-thread-store.js";
import { DEFAULT_THREAD_RETENTION_S } from "./thread-retention.js";
import type { ThreadStore } from "./thread-store.js";

export interface OpenThreadStoreOptions {
  /** Told how many idle threads the file store's sweep removed (the metrics). */
  onThreadsRemoved?: (count: number) => void;
}

export interface OpenedThreadStore {
  store: ThreadStore;
  /** Set when the store is Redis. */
  redis: RedisConnection | undefined;
  /** Whether thread state can be written now, for `/ready`; undefined for the file store, whose directory the probe writes in. */
  available: (() => Promise<boolean>) | undefined;
  /** Stops renewing leases and closes the connection (after the drain: runs in flight still write). */
  close(): Promise<void>;
}

export async function openThreadStore(
  config: Pick<Config, "stateDir" | "redisUrl" | "leaseTtlMs" | "threadRetentionS">,
  log: Logger = silentLogger,
  options: OpenThreadStoreOptions = {},
): Promise<OpenedThreadStore> {
  const retentionMs = (config.threadRetentionS ?? DEFAULT_THREAD_RETENTION_S) * 1000;
  if (config.redisUrl === undefined) {
    const store = new FileThreadStore({ stateDir: config.stateDir });
    const sweeper = new FileThreadSweeper({
      store,
      retentionMs,
      log,
      ...(options.onThreadsRemoved ? { onRemoved: options.onThreadsRemoved } : {}),
    });
    sweeper.start();
    return { store, redis: undefined, available: undefined, close: () => sweeper.stop() };
  }
  const redis = await connectRedis(config.redisUrl, { log });
  const store = new RedisThreadStore({
    client: redis.client,
    log,
    retentionMs,
    ...(config.leaseTtlMs ? { leaseTtlMs: config.leaseTtlMs } : {}),
  });
  log.info(
    { leaseTtlMs: store.leaseTtlMs },
    `thread state in Redis, shared with other instances; a run's lease lasts ${store.leaseTtlMs} ms unless renewed`,
  );
  return {
    store,
    redis,
    available: () => store.available(),
    async close() {
      await store.close();
      await redis.close();
    },
  };
}
