/**
 * Which of a run's writes may keep wholly off the event loop
 * (`SaveOptions.offLoop`): its end's, which nothing waits on but that end,
 * while other runs still stream; not the ids' or the admission's, which a
 * run's first events wait on.
 */
import { describe, expect, it } from "@jest/globals";
import type { ThreadState } from "../../../lib/state/thread-state.js";
import type { SaveOptions, ThreadLease, ThreadStore } from "../../../lib/state/thread-store.js";
import { admittedThreadRun } from "./admitted-thread-run.js";

/** A store that notes each save with the options it was given. */
function recordingStore() {
  const saves: Array<{ state: ThreadState; options: SaveOptions | undefined }> = [];
  const store = {
    load: async () => undefined,
    tryAcquire: async () => undefined,
    save: async (state: ThreadState, _lease?: ThreadLease, options?: SaveOptions) => void saves.push({ state, options }),
  } as unknown as ThreadStore;
  return { store, saves };
}

describe("ThreadRun: the run's end is written off the event loop", () => {
  it("asks the store to keep the end's write off the loop, and the ids' write in place", async () => {
    const { store, saves } = recordingStore();
    const thread = admittedThreadRun(store);
    await thread.rememberTask("task-1", undefined);
    const end = await thread.settleEnd({ kind: "run-end", error: undefined, kernelSettled: true }, () => {
      throw new Error("a settled end cancels nothing");
    });
    expect(end.error).toBeUndefined();
    // The task's write, then the end's: the execution ended, its task kept as the last one.
    expect(saves.map(({ state, options }) => [state.execution.taskId, options?.offLoop ?? false])).toEqual([
      ["task-1", false],
      [null, true],
    ]);
    expect(saves[1]!.state.execution.lastTaskId).toBe("task-1");
  });
});
