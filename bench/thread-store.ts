/**
 * Section 4: admission latency against the file thread store, with 10 and
 * with 100,000 thread files on disk. Admission (`lib/threads/admission.ts`)
 * reads only the thread it is asked for, so the two should cost the same.
 * Files are written directly as valid minimal state documents. Samples
 * alternate between the two stores, new threads and known ones.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { toInterrupt } from "../lib/interrupts/to-interrupt.js";
import { admitRun } from "../lib/threads/admission.js";
import { contextIdFor } from "../lib/a2a/request-mapping.js";
import { FileThreadStore, threadFileStem } from "../lib/state/file-thread-store.js";
import { validateRunInput } from "../lib/validation.js";
import { percentile, sortNumbers } from "./support.js";

const CWD = os.tmpdir();

function stateDocument(threadId: string): string {
  return JSON.stringify({
    schemaVersion: 1,
    threadId,
    contextId: contextIdFor(threadId),
    cwd: CWD,
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

let serial = 0;
function input(threadId: string) {
  const runId = `bench-run-${++serial}`;
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

export interface StoreResult {
  samples: number;
  small: { files: number; p50Ms: number; p90Ms: number };
  large: { files: number; p50Ms: number; p90Ms: number };
  ratio: number;
  seedSeconds: number;
}

export async function benchThreadStore({ files = 100_000, samples = 300 } = {}): Promise<StoreResult> {
  const seedStart = performance.now();
  const large = seed(files);
  const seedSeconds = (performance.now() - seedStart) / 1000;
  const small = seed(10);
  try {
    const stores = [
      { name: "small" as const, store: new FileThreadStore({ stateDir: small.dir }), known: small.known, times: [] as number[] },
      { name: "large" as const, store: new FileThreadStore({ stateDir: large.dir }), known: large.known, times: [] as number[] },
    ];
    const deps = (store: FileThreadStore) => ({
      store,
      now: Date.now,
      newExecutionId: () => `execution-${++serial}`,
      cancelTask: async () => undefined,
      toInterrupt: (pending: Parameters<typeof toInterrupt>[0]) => toInterrupt(pending),
    });
    const admitOnce = async (entry: (typeof stores)[number], index: number, record: boolean) => {
      // Half new threads, half known ones: both read one file (or find none) and write one.
      const threadId = index % 2 === 0 ? `fresh-${entry.name}-${index}-${serial}` : entry.known[index % entry.known.length]!;
      const start = performance.now();
      const admitted = await admitRun(input(threadId), deps(entry.store));
      const elapsed = performance.now() - start;
      await admitted.lease.release();
      if (record) entry.times.push(elapsed);
    };
    for (let i = 0; i < 40; i++) for (const entry of stores) await admitOnce(entry, i, false);
    for (let i = 0; i < samples; i++) {
      // Alternate which goes first, so neither always follows the other's fsync.
      const order = i % 2 === 0 ? stores : [...stores].reverse();
      for (const entry of order) await admitOnce(entry, i, true);
    }
    const summary = (times: number[]) => {
      const sorted = sortNumbers(times);
      return { p50Ms: percentile(sorted, 50), p90Ms: percentile(sorted, 90) };
    };
    const smallSummary = { files: 10, ...summary(stores[0]!.times) };
    const largeSummary = { files, ...summary(stores[1]!.times) };
    return { samples, small: smallSummary, large: largeSummary, ratio: largeSummary.p50Ms / smallSummary.p50Ms, seedSeconds };
  } finally {
    rmSync(large.dir, { recursive: true, force: true });
    rmSync(small.dir, { recursive: true, force: true });
  }
}
