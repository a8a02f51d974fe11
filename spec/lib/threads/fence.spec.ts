/**
 * A takeover (a request under another owner's fence) while the thread's
 * task is still working: the task now answers to the other writer, so this
 * thread hands its execution over (ended here, never cancelled), and the
 * orphan rule that follows in admission has nothing of its to cancel.
 */
import { describe, expect, it } from "@jest/globals";
import { applyExecutionFence } from "../../../lib/threads/fence.js";
import { newThreadState } from "../../../lib/threads/thread-transitions.js";
import type { ThreadState } from "../../../lib/state/thread-state.js";
import type { ValidRunInput } from "../../../lib/model/run-input.js";

const fence = (sandboxId: string) => ({ version: "session-handoff-v1", owner: { sandboxId } });
const withFence = (sandboxId: string) =>
  ({ forwardedProps: { iacCode: { executionFence: fence(sandboxId) } } }) as unknown as ValidRunInput;

function workingThread(): ThreadState {
  const state = newThreadState({ threadId: "t", contextId: "ctx", cwd: "/tmp", userId: null, executionId: "e1", rosInvocationId: "ros" });
  return { ...state, execution: { ...state.execution, taskId: "task-1" }, executionFence: fence("sb-a") };
}
const working = async () => ({ id: "task-1", contextId: "ctx", status: { state: "TASK_STATE_WORKING" } });

describe("applyExecutionFence", () => {
  it("hands a still-working execution over to the new owner: ended here, the new fence kept", async () => {
    const { state, changed } = await applyExecutionFence(workingThread(), withFence("sb-b"), { getTask: working, now: () => 0 });
    expect(state.terminalExecutionIds).toContain("e1");
    expect(state.executionFence).toEqual(fence("sb-b"));
    expect(changed).toBe(true);
  });

  it("leaves a working execution to the orphan rule on a thread's first fence (no other writer is known)", async () => {
    const { executionFence: _none, ...unfenced } = workingThread();
    const { state } = await applyExecutionFence(unfenced, withFence("sb-b"), { getTask: working, now: () => 0 });
    expect(state.terminalExecutionIds).toEqual([]);
    expect(state.executionFence).toEqual(fence("sb-b"));
  });

  it("leaves a working execution alone under the same owner", async () => {
    const before = workingThread();
    let asked = 0;
    const { state, changed } = await applyExecutionFence(before, withFence("sb-a"), {
      getTask: async () => ((asked += 1), working()),
      now: () => 0,
    });
    expect(asked).toBe(0);
    expect(state.terminalExecutionIds).toEqual([]);
    expect(changed).toBe(false);
  });
});
