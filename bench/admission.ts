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

/**
 * A new turn's first two writes, as its run makes them: the admission's,
 * then the task's id once the kernel named it. `overlapped` prepares the
 * second while the first commits (`ThreadRun`: `save` with `after`),
 * `serial` starts it once the first has committed (as before); samples
 * alternate between the two, on new threads. Each sample is the time from
 * admission to both on disk.
 */
export async function timeFirstWrites(
  store: ThreadStore,
  { warmups, samples }: { warmups: number; samples: number },
): Promise<{ serial: number[]; overlapped: number[] }> {
  const times = { serial: [] as number[], overlapped: [] as number[] };
  const once = async (mode: "serial" | "overlapped", record: boolean) => {
    const start = performance.now();
    const admitted = await admitRun(admissionInput(`first-writes-${nextSerial()}`), admissionDeps(store));
    const withTask = { ...admitted.state, execution: { ...admitted.state.execution, taskId: `task-${nextSerial()}` } };
    if (mode === "serial") {
      await admitted.written;
      await store.save(withTask, admitted.lease);
    } else {
      await Promise.all([admitted.written, store.save(withTask, admitted.lease, { after: admitted.written })]);
    }
    const elapsed = performance.now() - start;
    await admitted.lease.release();
    if (record) times[mode].push(elapsed);
  };
  for (let i = 0; i < warmups; i++) for (const mode of ["serial", "overlapped"] as const) await once(mode, false);
  for (let i = 0; i < samples; i++) {
    const order = i % 2 === 0 ? (["serial", "overlapped"] as const) : (["overlapped", "serial"] as const);
    for (const mode of order) await once(mode, true);
  }
  return times;
}
