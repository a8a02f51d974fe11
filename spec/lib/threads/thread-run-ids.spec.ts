/**
 * The ids' writes of a run (`ThreadRun.rememberTask`, `rememberSession`):
 * queued at once, begun a turn later, so the first text the kernel's first
 * frame brings is told in the turn it arrived.
 */
import { describe, expect, it } from "@jest/globals";
import type { ThreadState } from "../../../lib/state/thread-state.js";
import type { ThreadStore } from "../../../lib/state/thread-store.js";
import { admittedThreadRun } from "./admitted-thread-run.js";

/** A store that notes each save as it begins and commits it when told. */
function recordingStore() {
  const begun: ThreadState[] = [];
  const store: ThreadStore = {
    load: async () => undefined,
    tryAcquire: async () => undefined,
    save: async (state: ThreadState) => void begun.push(state),
  } as unknown as ThreadStore;
  return { store, begun };
}

const endOfTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("ThreadRun: the ids' writes", () => {
  it("begins the task's write after the turn that asked for it, and a view waits for it all the same", async () => {
    const { store, begun } = recordingStore();
    const thread = admittedThreadRun(store);
    const written = thread.rememberTask("task-1", undefined);
    expect(written).toBeDefined();
    // What the turn goes on to tell (the first text) comes first: nothing is prepared in this turn.
    const viewed = thread.changesWritten;
    for (let microtask = 0; microtask < 10; microtask++) await Promise.resolve();
    expect(begun).toEqual([]);
    // The task is the run's to cancel by id at once, written or not.
    expect(thread.taskIdToCancel).toBe("task-1");
    await viewed;
    expect(begun.map((state) => state.execution.taskId)).toEqual(["task-1"]);
    await written;
    expect(thread.state.execution.taskId).toBe("task-1");
  });

  it("keeps the order of the writes: a change asked for after the ids' lands after them", async () => {
    const { store, begun } = recordingStore();
    const thread = admittedThreadRun(store);
    const task = thread.rememberTask("task-1", undefined);
    const session = thread.rememberSession("session-1");
    await Promise.all([task, session]);
    await endOfTurn();
    expect(begun.map((state) => [state.execution.taskId, state.iacCodeSessionId])).toEqual([
      ["task-1", null],
      ["task-1", "session-1"],
    ]);
  });

  it("throws at once for a task that changed, as before", () => {
    const { store } = recordingStore();
    const thread = admittedThreadRun(store);
    void thread.rememberTask("task-1", undefined);
    expect(() => thread.rememberTask("task-2", undefined)).toThrow(expect.objectContaining({ code: "A2A_PROTOCOL_ERROR" }));
  });
});
