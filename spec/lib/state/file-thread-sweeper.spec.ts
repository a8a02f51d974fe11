/**
 * Retention in the file store (IAC_CODE_AGUI_THREAD_RETENTION_S): a sweep
 * removes threads left unsaved longer than the retention (saves dated
 * back through their files' mtimes, against an injected clock), and never one with a run (its lease held) or with a
 * pending interrupt that has not expired; removals reach the metrics.
 */
import { readdirSync, utimesSync, writeFileSync } from "node:fs";
import { afterEach, beforeEach, describe, expect, it } from "@jest/globals";
import { ServiceMetrics } from "../../../lib/metrics/service-metrics.js";
import { FileThreadStore } from "../../../lib/state/file-thread-store.js";
import { FileThreadSweeper } from "../../../lib/state/file-thread-sweeper.js";
import type { ThreadState } from "../../../lib/state/thread-state.js";
import { scratchDir, threadState, type ScratchDir } from "./thread-state-fixture.js";

const DAY_MS = 24 * 60 * 60 * 1000;
const RETENTION_MS = 30 * DAY_MS;

let scratch: ScratchDir;
let store: FileThreadStore;
/** The sweep's clock; a save is dated by the file's mtime, which `saveAt` sets. */
let nowMs: number;
const sweepers: FileThreadSweeper[] = [];

beforeEach(() => {
  scratch = scratchDir("agui-retention-");
  store = new FileThreadStore({ stateDir: scratch.path });
  nowMs = Date.now();
});
afterEach(async () => {
  for (const sweeper of sweepers.splice(0)) await sweeper.stop();
  scratch.remove();
});

function sweeperFor(options: { retentionMs?: number; batchSize?: number; onRemoved?: (count: number) => void } = {}) {
  const sweeper = new FileThreadSweeper({ store, retentionMs: RETENTION_MS, now: () => nowMs, ...options });
  sweepers.push(sweeper);
  return sweeper;
}

/** A thread with no interrupt waiting. */
const idleThread = (threadId: string): ThreadState => {
  const state = threadState(threadId);
  return { ...state, execution: { ...state.execution, pending: {} } };
};

/** A thread whose one pending interrupt expires at `expiresAt` (none: it never does). */
const threadWaiting = (threadId: string, expiresAt: string | undefined): ThreadState => {
  const state = threadState(threadId);
  const pending = state.execution.pending["input-1"]!;
  const waiting = expiresAt === undefined ? { value: pending.value, sideband: false } : { ...pending, expiresAt };
  return { ...state, execution: { ...state.execution, pending: { "input-1": waiting } } };
};

/** Saves `state` as if at `atMs`: a file's mtime is its last save. */
async function saveAt(state: ThreadState, atMs: number): Promise<void> {
  await store.save(state);
  utimesSync(store.fileFor(state.threadId), atMs / 1000, atMs / 1000);
}

const threadFiles = () => readdirSync(store.threadsDir).filter((name) => name.endsWith(".json"));

describe("FileThreadSweeper", () => {
  it("removes a thread unsaved for longer than the retention and keeps one saved within it", async () => {
    await saveAt(idleThread("old"), nowMs - RETENTION_MS - 1000);
    await saveAt(idleThread("recent"), nowMs - RETENTION_MS + 60_000);
    const removed: number[] = [];

    expect(await sweeperFor({ onRemoved: (count) => removed.push(count) }).sweep()).toBe(1);

    expect(await store.load("old")).toBeUndefined();
    expect(await store.load("recent")).toEqual(idleThread("recent"));
    expect(removed).toEqual([1]);
    // The thread starts afresh: a new run on the same id gets a lease and saves.
    const lease = await store.tryAcquire("old");
    expect(lease).toBeDefined();
    await store.save(idleThread("old"), lease);
    await lease!.release();
    expect(await store.load("old")).toEqual(idleThread("old"));
  });

  it("keeps a thread whose lease a run holds, and removes it once the run let go", async () => {
    await saveAt(idleThread("running"), nowMs - RETENTION_MS - DAY_MS);
    const lease = await store.tryAcquire("running");
    const sweeper = sweeperFor();

    expect(await sweeper.sweep()).toBe(0);
    expect(await store.load("running")).toEqual(idleThread("running"));
    await lease!.release();

    expect(await sweeper.sweep()).toBe(1);
    expect(await store.load("running")).toBeUndefined();
  });

  it("keeps a thread while its pending interrupt has not expired, or when it never expires", async () => {
    const longAgo = nowMs - RETENTION_MS - DAY_MS;
    const waitingDue = threadWaiting("answer-due", new Date(nowMs + 60_000).toISOString());
    await saveAt(waitingDue, longAgo);
    await saveAt(threadWaiting("answer-any-time", undefined), longAgo);
    await saveAt(threadWaiting("answer-too-late", new Date(nowMs - 60_000).toISOString()), longAgo);

    expect(await sweeperFor().sweep()).toBe(1);

    expect(await store.load("answer-too-late")).toBeUndefined();
    expect(await store.load("answer-due")).toEqual(waitingDue);
    expect(await store.load("answer-any-time")).toEqual(threadWaiting("answer-any-time", undefined));
  });

  it("removes nothing with retention 0", async () => {
    await saveAt(idleThread("kept"), nowMs - 10 * 365 * DAY_MS);

    expect(await sweeperFor({ retentionMs: 0 }).sweep()).toBe(0);
    expect(threadFiles()).toHaveLength(1);
  });

  it("looks at a bounded number of files per sweep and goes on where the last one stopped", async () => {
    for (let index = 0; index < 5; index++) await saveAt(idleThread(`thread-${index}`), nowMs - RETENTION_MS - 1000);
    const sweeper = sweeperFor({ batchSize: 2 });

    expect(await sweeper.sweep()).toBe(2);
    expect(threadFiles()).toHaveLength(3);
    expect(await sweeper.sweep()).toBe(2);
    expect(await sweeper.sweep()).toBe(1);
    expect(threadFiles()).toHaveLength(0);
  });

  it("leaves a file that names another thread, or none, to the operator", async () => {
    await saveAt(idleThread("mine"), nowMs - RETENTION_MS - 1000);
    writeFileSync(store.fileFor("forged"), JSON.stringify(idleThread("mine")));
    writeFileSync(store.fileFor("garbled"), "{ not json");
    for (const file of [store.fileFor("forged"), store.fileFor("garbled")]) utimesSync(file, 0, 0);

    expect(await sweeperFor().sweep()).toBe(1);
    expect(threadFiles().sort()).toEqual(
      [store.fileFor("forged"), store.fileFor("garbled")].map((file) => file.slice(store.threadsDir.length + 1)).sort(),
    );
  });

  it("counts removals on /metrics as iac_code_agui_threads_removed_total", async () => {
    const metrics = new ServiceMetrics();
    await saveAt(idleThread("a"), nowMs - RETENTION_MS - 1000);
    await saveAt(idleThread("b"), nowMs - RETENTION_MS - 1000);

    await sweeperFor({ onRemoved: (count) => metrics.threadsRemoved.inc(count) }).sweep();

    expect((await metrics.scrape()).text).toMatch(/^iac_code_agui_threads_removed_total 2$/m);
  });

  it("sweeps nothing and throws nothing before any thread was saved", async () => {
    expect(await sweeperFor().sweep()).toBe(0);
  });
});
