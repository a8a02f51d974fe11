/**
 * The ids' writes of a run (`ThreadRun.rememberTask`, `rememberSession`):
 * queued at once, begun a turn later, so the first text the kernel's first
 * frame brings is told in the turn it arrived.
 */
import { describe, expect, it } from "@jest/globals";
import { keepInput } from "../../../lib/interrupts/keep-input.js";
import { toInterrupt } from "../../../lib/interrupts/to-interrupt.js";
import type { ThreadState } from "../../../lib/state/thread-state.js";
import type { ThreadLease, ThreadStore } from "../../../lib/state/thread-store.js";
import { ThreadRun } from "../../../lib/threads/thread-run.js";
import { threadState } from "../state/thread-state-fixture.js";

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

const lease: ThreadLease = { threadId: "t", token: 1, release: async () => {} };

/** A thread as a new turn is admitted: no task, no kernel session, nothing pending. */
const admittedState = (): ThreadState => {
  const state = threadState("t");
  return { ...state, iacCodeSessionId: null, execution: { ...state.execution, taskId: null, pending: {} } };
};

function threadRun(store: ThreadStore) {
  return new ThreadRun(admittedState(), {
    store,
    lease,
    interruptTtlS: 0,
    now: Date.now,
    keepInput: (projection) => keepInput(projection),
    toInterrupt: (pending) => toInterrupt(pending, "en"),
  });
}

const endOfTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("ThreadRun: the ids' writes", () => {
  it("begins the task's write after the turn that asked for it, and a view waits for it all the same", async () => {
    const { store, begun } = recordingStore();
    const thread = threadRun(store);
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
    const thread = threadRun(store);
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
    const thread = threadRun(store);
    void thread.rememberTask("task-1", undefined);
    expect(() => thread.rememberTask("task-2", undefined)).toThrow(expect.objectContaining({ code: "A2A_PROTOCOL_ERROR" }));
  });
});
