/**
 * Section 4: admission latency against the file thread store, with 10 and
 * with 100,000 thread files on disk. Admission (`lib/threads/admission.ts`)
 * reads only the thread it is asked for, so the two should cost the same.
 * Files are written directly as valid minimal state documents. Samples
 * alternate between the two stores, new threads and known ones. Then a
 * new turn's first two writes (the admission's and the task id's), the
 * second prepared beside the first against after it (`timeFirstWrites`).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { contextIdFor } from "../lib/a2a/request-mapping.js";
import { FileThreadStore, threadFileStem } from "../lib/state/file-thread-store.js";
import { BENCH_CWD, latency, nextSerial, timeAdmissions, timeFirstWrites } from "./admission.js";

function stateDocument(threadId: string): string {
  return JSON.stringify({
    schemaVersion: 1,
    threadId,
    contextId: contextIdFor(threadId),
    cwd: BENCH_CWD,
    userId: null,
    iacCodeSessionId: null,
    execution: {
      executionId: `execution-${threadId}`,
      rosInvocationId: "bench",
      taskId: null,
      lastTaskId: null,
      pipelineSequence: 0,
      pipelineOpenSteps: [],
      textSnapshotDigests: [],
      pending: {},
    },
    runDigests: {},
    appliedResumeDigests: [],
    terminalExecutionIds: [],
  });
}

function seed(count: number): { dir: string; known: string[] } {
  const dir = mkdtempSync(path.join(os.tmpdir(), `agui-bench-store-${count}-`));
  const threads = path.join(dir, "threads");
  mkdirSync(threads, { recursive: true, mode: 0o700 });
  const known: string[] = [];
  for (let i = 0; i < count; i++) {
    const threadId = `seeded-${i}`;
    writeFileSync(path.join(threads, `${threadFileStem(threadId)}.json`), stateDocument(threadId), { mode: 0o600 });
    if (i % Math.max(1, Math.floor(count / 10)) === 0) known.push(threadId);
  }
  return { dir, known };
}

export interface StoreResult {
  samples: number;
  small: { files: number; p50Ms: number; p90Ms: number };
  large: { files: number; p50Ms: number; p90Ms: number };
  ratio: number;
  seedSeconds: number;
  /** A new turn's admission and task-id writes, the second prepared beside the first ÷ after it (p50 of each). */
  firstWrites: { samples: number; serialP50Ms: number; overlappedP50Ms: number; ratio: number };
}

export async function benchThreadStore({ files = 100_000, samples = 300, firstWriteSamples = 200 } = {}): Promise<StoreResult> {
  const seedStart = performance.now();
  const large = seed(files);
  const seedSeconds = (performance.now() - seedStart) / 1000;
  const small = seed(10);
  try {
    const stores = [
      { name: "small" as const, store: new FileThreadStore({ stateDir: small.dir }), known: small.known, times: [] as number[] },
      { name: "large" as const, store: new FileThreadStore({ stateDir: large.dir }), known: large.known, times: [] as number[] },
    ];
    await timeAdmissions(stores, {
      warmups: 40,
      samples,
      // Half new threads, half known ones: both read one file (or find none) and write one.
      threadIdFor: (entry, index) =>
        index % 2 === 0 ? `fresh-${entry.name}-${index}-${nextSerial()}` : entry.known[index % entry.known.length]!,
    });
    const smallSummary = { files: 10, ...latency(stores[0]!.times) };
    const largeSummary = { files, ...latency(stores[1]!.times) };
    const writes = await timeFirstWrites(stores[0]!.store, { warmups: 20, samples: firstWriteSamples });
    const serialP50Ms = latency(writes.serial).p50Ms;
    const overlappedP50Ms = latency(writes.overlapped).p50Ms;
    return {
      samples,
      small: smallSummary,
      large: largeSummary,
      ratio: largeSummary.p50Ms / smallSummary.p50Ms,
      seedSeconds,
      firstWrites: { samples: firstWriteSamples, serialP50Ms, overlappedP50Ms, ratio: overlappedP50Ms / serialP50Ms },
    };
  } finally {
    rmSync(large.dir, { recursive: true, force: true });
    rmSync(small.dir, { recursive: true, force: true });
  }
}
