/**
 * Admission as the thread-store sections time it (`thread-store.ts`,
 * `redis-store.ts`): `admitRun` on a store, then the lease let go, samples
 * alternating between the stores compared.
 */
import os from "node:os";
import { toInterrupt } from "../lib/interrupts/to-interrupt.js";
import type { ThreadStore } from "../lib/state/thread-store.js";
import { admitRun } from "../lib/threads/admission.js";
import { validateRunInput } from "../lib/validation.js";
import { percentile, sortNumbers } from "./support.js";

/** The working directory every admitted run names (and a seeded thread document holds). */
export const BENCH_CWD = os.tmpdir();

let serial = 0;
/** A number no other admission of this process has had: fresh thread and run ids. */
export const nextSerial = (): number => ++serial;

function admissionInput(threadId: string) {
  const runId = `bench-run-${process.pid}-${nextSerial()}`;
  return validateRunInput(
    {
      threadId,
      runId,
      state: {},
      messages: [{ id: `msg-${runId}`, role: "user", content: "hello" }],
      tools: [],
      context: [],
      forwardedProps: { iacCode: { schemaVersion: 1, rosInvocationId: "bench", cwd: BENCH_CWD } },
    },
    { allowedCwds: [BENCH_CWD] },
  );
}

const admissionDeps = (store: ThreadStore) => ({
  store,
  now: Date.now,
  newExecutionId: () => `execution-${nextSerial()}`,
  cancelTask: async () => undefined,
  toInterrupt: (pending: Parameters<typeof toInterrupt>[0]) => toInterrupt(pending),
});

export interface TimedStore {
  store: ThreadStore;
  /** Each recorded admission's milliseconds. */
  times: number[];
}

/**
 * Admits `warmups` runs per store unrecorded, then `samples` recorded, on
 * the thread `threadIdFor` names for each (new or known).
 */
export async function timeAdmissions<S extends TimedStore>(
  stores: S[],
  { warmups, samples, threadIdFor }: { warmups: number; samples: number; threadIdFor: (entry: S, index: number) => string },
): Promise<void> {
  const admitOnce = async (entry: S, index: number, record: boolean) => {
    const threadId = threadIdFor(entry, index);
    const start = performance.now();
    const admitted = await admitRun(admissionInput(threadId), admissionDeps(entry.store));
    await admitted.written;
    const elapsed = performance.now() - start;
    await admitted.lease.release();
    if (record) entry.times.push(elapsed);
  };
  for (let i = 0; i < warmups; i++) for (const entry of stores) await admitOnce(entry, i, false);
  for (let i = 0; i < samples; i++) {
    // Alternate which goes first, so neither always follows the other's fsync.
    const order = i % 2 === 0 ? stores : [...stores].reverse();
    for (const entry of order) await admitOnce(entry, i, true);
  }
}

export function latency(times: number[]): { p50Ms: number; p90Ms: number } {
  const sorted = sortNumbers(times);
  return { p50Ms: percentile(sorted, 50), p90Ms: percentile(sorted, 90) };
}
