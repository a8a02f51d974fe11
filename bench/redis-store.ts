/**
 * Section "redis": admission latency with the Redis thread store against
 * the file store, both as the service uses them (`admitRun`, then the
 * lease let go). Redis is a real `redis-server` on loopback, started as the
 * tests start theirs (`spec/support/redis-server.ts`: append-only, fsync
 * on every write, so it promises what the file store's fsync promises).
 * Samples alternate between the stores, half new threads and half known.
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { toInterrupt } from "../lib/interrupts/to-interrupt.js";
import { FileThreadStore } from "../lib/state/file-thread-store.js";
import { connectRedis } from "../lib/state/redis-connection.js";
import { RedisThreadStore } from "../lib/state/redis-thread-store.js";
import type { ThreadStore } from "../lib/state/thread-store.js";
import { admitRun } from "../lib/threads/admission.js";
import { validateRunInput } from "../lib/validation.js";
import { startRedisServer } from "../spec/support/redis-server.js";
import { percentile, sortNumbers } from "./support.js";

const CWD = os.tmpdir();
let serial = 0;

function admissionInput(threadId: string) {
  const runId = `bench-run-${process.pid}-${++serial}`;
  return validateRunInput(
    {
      threadId,
      runId,
      state: {},
      messages: [{ id: `msg-${runId}`, role: "user", content: "hello" }],
      tools: [],
      context: [],
      forwardedProps: { iacCode: { schemaVersion: 1, rosInvocationId: "bench", cwd: CWD } },
    },
    { allowedCwds: [CWD] },
  );
}

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
  const deps = (store: ThreadStore) => ({
    store,
    now: Date.now,
    newExecutionId: () => `execution-${++serial}`,
    cancelTask: async () => undefined,
    toInterrupt: (pending: Parameters<typeof toInterrupt>[0]) => toInterrupt(pending),
  });
  const known = Array.from({ length: knownThreads }, (_, i) => `known-${process.pid}-${i}`);
  const admitOnce = async (entry: (typeof stores)[number], index: number, record: boolean) => {
    // Half new threads (nothing to read, one document written), half known ones (one read, one write).
    const threadId = index % 2 === 0 ? `fresh-${entry.name}-${process.pid}-${++serial}` : known[index % known.length]!;
    const start = performance.now();
    const admitted = await admitRun(admissionInput(threadId), deps(entry.store));
    const elapsed = performance.now() - start;
    await admitted.lease.release();
    if (record) entry.times.push(elapsed);
  };
  try {
    // Warm-up, which also makes the known threads known to both stores.
    for (let i = 0; i < 2 * knownThreads; i++) for (const entry of stores) await admitOnce(entry, i, false);
    for (let i = 0; i < samples; i++) {
      // Alternate which goes first, so neither always follows the other's fsync.
      const order = i % 2 === 0 ? stores : [...stores].reverse();
      for (const entry of order) await admitOnce(entry, i, true);
    }
    const summary = (times: number[]) => {
      const sorted = sortNumbers(times);
      return { p50Ms: percentile(sorted, 50), p90Ms: percentile(sorted, 90) };
    };
    const file = summary(stores[0]!.times);
    const redis = summary(stores[1]!.times);
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
