/**
 * Section "redis": admission latency with the Redis thread store against
 * the file store, both as the service uses them (`admitRun`, then the
 * lease let go). Redis is a real `redis-server` on loopback, started as the
 * tests start theirs (`lib/testing/redis-server.ts`: append-only, fsync
 * on every write, so it promises what the file store's fsync promises).
 * Samples alternate between the stores, half new threads and half known.
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { FileThreadStore } from "../lib/state/file-thread-store.js";
import { connectRedis } from "../lib/state/redis-connection.js";
import { RedisThreadStore } from "../lib/state/redis-thread-store.js";
import type { ThreadStore } from "../lib/state/thread-store.js";
import { startRedisServer } from "../lib/testing/redis-server.js";
import { latency, nextSerial, timeAdmissions } from "./admission.js";

export interface RedisStoreResult {
  samples: number;
  file: { p50Ms: number; p90Ms: number };
  redis: { p50Ms: number; p90Ms: number };
  /** Redis p50 ÷ file p50. */
  ratio: number;
}

export async function benchRedisStore({ samples = 300, knownThreads = 20 } = {}): Promise<RedisStoreResult> {
  const server = await startRedisServer();
  const connection = await connectRedis(server.url);
  const stateDir = mkdtempSync(path.join(os.tmpdir(), "agui-bench-file-store-"));
  const redisStore = new RedisThreadStore({ client: connection.client, keyPrefix: `bench-${process.pid}:` });
  const stores: Array<{ name: "file" | "redis"; store: ThreadStore; times: number[] }> = [
    { name: "file", store: new FileThreadStore({ stateDir }), times: [] },
    { name: "redis", store: redisStore, times: [] },
  ];
  const known = Array.from({ length: knownThreads }, (_, i) => `known-${process.pid}-${i}`);
  try {
    await timeAdmissions(stores, {
      // The warm-up also makes the known threads known to both stores.
      warmups: 2 * knownThreads,
      samples,
      // Half new threads (nothing to read, one document written), half known ones (one read, one write).
      threadIdFor: (entry, index) =>
        index % 2 === 0 ? `fresh-${entry.name}-${process.pid}-${nextSerial()}` : known[index % known.length]!,
    });
    const file = latency(stores[0]!.times);
    const redis = latency(stores[1]!.times);
    return { samples, file, redis, ratio: redis.p50Ms / file.p50Ms };
  } finally {
    await redisStore.close();
    await connection.close();
    await server.stop();
    rmSync(stateDir, { recursive: true, force: true });
  }
}

const ms = (value: number) => value.toLocaleString("en-US", { maximumFractionDigits: 2, minimumFractionDigits: 2 });

/** The section's row of the bench table (see `run.ts`). */
export function redisStoreRows(result: RedisStoreResult): Array<[string, string, string, string, string, string]> {
  return [
    [
      "admission p50, Redis vs file store (ms)",
      ms(result.redis.p50Ms),
      `file store: ${ms(result.file.p50Ms)}; p90 Redis ${ms(result.redis.p90Ms)}, file ${ms(result.file.p90Ms)}`,
      ms(result.ratio),
      "–",
      "–",
    ],
  ];
}
