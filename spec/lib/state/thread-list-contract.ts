/**
 * What every store's list of threads promises (`ThreadStore.listThreads`):
 * run by `file-thread-list.spec.ts` against the file store and by
 * `redis-thread-list.spec.ts` against a real Redis. Each store says when a
 * state was saved its own way (a file's modification time, a hash field),
 * so the spec sets that time through `saveAt`.
 */
import { afterEach, beforeEach, expect, it } from "@jest/globals";
import type { ThreadState } from "../../../lib/state/thread-state.js";
import type { ThreadStore } from "../../../lib/state/thread-store.js";
import { threadState } from "./thread-state-fixture.js";

export interface ListingStoreUnderTest {
  store: Required<Pick<ThreadStore, "listThreads" | "save" | "tryAcquire">>;
  /** Saves the state so that the store tells `atMs` as the time it was saved. */
  saveAt(state: ThreadState, atMs: number): Promise<void>;
  /** Puts `content` where the store keeps the thread's state, bypassing the store. */
  writeRaw(threadId: string, content: string): Promise<void>;
  remove(): Promise<void>;
}

const T0 = Date.parse("2026-11-30T10:00:00.000Z");
const idle = (threadId: string): ThreadState => {
  const state = threadState(threadId);
  return { ...state, execution: { ...state.execution, pending: {} } };
};

export function describeThreadListContract(open: () => Promise<ListingStoreUnderTest>): void {
  let under: ListingStoreUnderTest;
  beforeEach(async () => {
    under = await open();
  });
  afterEach(async () => {
    await under.remove();
  });

  it("lists nothing before any thread was saved", async () => {
    expect(await under.store.listThreads(50)).toEqual([]);
  });

  it("lists the threads the most recently saved first, with the time, the lease and the waiting interrupts", async () => {
    await under.saveAt(idle("thread-old"), T0);
    await under.saveAt(threadState("thread-paused"), T0 + 2_000);
    await under.saveAt(idle("Thread With Spaces/and ümlauts"), T0 + 1_000);
    const lease = await under.store.tryAcquire("thread-old");
    expect(lease).toBeDefined();

    expect(await under.store.listThreads(50)).toEqual([
      { threadId: "thread-paused", updatedAt: T0 + 2_000, running: false, pendingInterrupts: 1 },
      { threadId: "Thread With Spaces/and ümlauts", updatedAt: T0 + 1_000, running: false, pendingInterrupts: 0 },
      { threadId: "thread-old", updatedAt: T0, running: true, pendingInterrupts: 0 },
    ]);
    await lease!.release();
    expect((await under.store.listThreads(50)).find((thread) => thread.threadId === "thread-old")?.running).toBe(false);
  });

  it("returns at most `limit` threads, the newest ones", async () => {
    for (let i = 0; i < 7; i++) await under.saveAt(idle(`thread-${i}`), T0 + i * 1_000);
    expect((await under.store.listThreads(3)).map((thread) => thread.threadId)).toEqual(["thread-6", "thread-5", "thread-4"]);
  });

  it("leaves out a stored state it cannot read, and lists the others", async () => {
    await under.saveAt(idle("thread-good"), T0);
    await under.writeRaw("thread-corrupt", "{ not json");
    await under.writeRaw("thread-foreign", JSON.stringify(idle("another-thread")));
    expect((await under.store.listThreads(50)).map((thread) => thread.threadId)).toEqual(["thread-good"]);
  });
}
