/**
 * The execution fence (issue 13), through the real service and the demo
 * kernel: a request's fence goes to the kernel as `execution_fence`; a
 * request under another owner than the thread's last has the execution read
 * again from the kernel (GetTask) before admission's rules use it, and a
 * request under the same owner does not.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { EventType, type AGUIEvent, type Interrupt } from "@ag-ui/core";
import type { FixtureLine, ReplayTurn } from "../../lib/kernel/replay-kernel.js";
import { FileThreadStore } from "../../lib/state/file-thread-store.js";
import { expectValidRun } from "../support/agui.js";
import { permissionProjection } from "../support/interrupt-scripts.js";
import { postRun, runInput, script, startHarness, uniqueId, type Harness } from "../support/service.js";

const deleteProjection = {
  ...permissionProjection,
  inputId: "perm-2",
  toolUseId: "toolu-delete",
  toolName: "ros_delete_stack",
  title: "Delete stack old-vpc",
  prompt: "Allow deleting stack old-vpc?",
  target: "old-vpc",
};

const fenceOf = (owner: Record<string, string>) => ({ version: "session-handoff-v1", owner });
const sandboxA = { sandboxId: "sb-a", activationId: "act-a", leaseId: "lease-a", runId: "run-a" };
const sandboxB = { sandboxId: "sb-b", activationId: "act-b", leaseId: "lease-b", runId: "run-b" };

/** Text starting "park" parks its task on perm-1; anything else completes. */
const tasks = new Map<string, { taskId: string; contextId: string }>();
function parkOrComplete(turn: ReplayTurn): FixtureLine[] {
  tasks.set(turn.text, { taskId: turn.taskId, contextId: turn.contextId });
  if (!turn.text.startsWith("park")) return [script.task(), script.status("WORKING", undefined, "Done. "), script.status("COMPLETED")];
  return [
    script.task(),
    script.status("WORKING", undefined, "One change to make. "),
    script.status("INPUT_REQUIRED", { input: permissionProjection }),
  ];
}

let harness: Harness;
beforeAll(async () => {
  harness = await startHarness({ script: parkOrComplete });
});
afterAll(() => harness.close());

type Input = ReturnType<typeof runInput>;
const post = (body: unknown) => postRun(harness.service.url, body);
const interruptsOf = (events: AGUIEvent[]): Interrupt[] =>
  ((events.at(-1) as { outcome?: { interrupts?: Interrupt[] } }).outcome?.interrupts ?? []) as Interrupt[];
const methodsSince = (before: number) => harness.kernel.received.slice(before).map((call) => call.method);
/** A new turn on the thread of `first`, under `owner`'s fence. */
const nextTurn = (first: Input, text: string, owner: Record<string, string>) =>
  runInput(text, { threadId: first.threadId }, { executionFence: fenceOf(owner) });

/** A thread parked on perm-1 under sandbox A's fence, and its task. */
async function parkedUnderA(): Promise<{ first: Input; taskId: string; contextId: string }> {
  const text = `park ${uniqueId("t")}`;
  const first = runInput(text, {}, { executionFence: fenceOf(sandboxA) });
  const parked = await post(first);
  await expectValidRun(parked.events);
  expect(interruptsOf(parked.events).map((interrupt) => interrupt.id)).toEqual(["perm-1"]);
  return { first, ...tasks.get(text)! };
}

describe("the execution fence", () => {
  it("goes to the kernel as metadata.iac_code.execution_fence", async () => {
    const before = harness.kernel.received.length;
    const done = await post(runInput(`done ${uniqueId("t")}`, {}, { executionFence: fenceOf(sandboxA) }));
    await expectValidRun(done.events);
    const sent = harness.kernel.received.slice(before).find((call) => call.method === "SendStreamingMessage");
    const params = sent?.params as { message: { metadata: { iac_code: Record<string, unknown> } } };
    expect(params.message.metadata.iac_code.execution_fence).toEqual(fenceOf(sandboxA));
  });

  it("under another owner, a parked task's pending interrupts become what GetTask shows", async () => {
    const { first, taskId, contextId } = await parkedUnderA();
    // Meanwhile, under sandbox B, the task came to wait on perm-2 as well, with no status this service saw.
    await harness.kernel.addWaiting(taskId, { pendingPermissions: [{ ...deleteProjection, requestTaskId: taskId, contextId }] });
    const before = harness.kernel.received.length;
    const refused = await post(nextTurn(first, "another message", sandboxB));
    expect(refused.status).toBe(409);
    const error = (refused.json as { error: { code: string; interrupts: Interrupt[] } }).error;
    expect(error.code).toBe("RESUME_REQUIRED");
    expect(error.interrupts.map((interrupt) => interrupt.id)).toEqual(["perm-1", "perm-2"]);
    expect(methodsSince(before)).toEqual(["GetTask"]);

    // The new owner is kept: its next request reads nothing again, and still finds both interrupts.
    const again = harness.kernel.received.length;
    const stillRefused = await post(nextTurn(first, "and another", sandboxB));
    expect(stillRefused.status).toBe(409);
    expect((stillRefused.json as { error: { interrupts: Interrupt[] } }).error.interrupts.map((interrupt) => interrupt.id)).toEqual([
      "perm-1",
      "perm-2",
    ]);
    expect(methodsSince(again)).toEqual([]);
  });

  it("under another owner, a task the kernel no longer knows ends the execution without a cancel, and the message is a new turn", async () => {
    const { first } = await parkedUnderA();
    // The session moved on elsewhere: the task this thread remembers is gone from the kernel.
    const store = new FileThreadStore({ stateDir: harness.stateDir });
    const stored = (await store.load(first.threadId))!;
    await store.save({ ...stored, execution: { ...stored.execution, taskId: "task-gone-elsewhere" } });

    const before = harness.kernel.received.length;
    const turn = await post(nextTurn(first, `done ${uniqueId("t")}`, sandboxB));
    await expectValidRun(turn.events);
    expect(turn.events.at(-1)?.type).toBe(EventType.RUN_FINISHED);
    expect(JSON.stringify(turn.events)).toContain("Done.");
    const methods = methodsSince(before);
    expect(methods[0]).toBe("GetTask");
    expect(methods).toContain("SendStreamingMessage");
    expect(methods).not.toContain("CancelTask");
  });

  it("under the same owner, nothing is read again: the stored interrupts stand", async () => {
    const { first, taskId, contextId } = await parkedUnderA();
    await harness.kernel.addWaiting(taskId, { pendingPermissions: [{ ...deleteProjection, requestTaskId: taskId, contextId }] });
    const before = harness.kernel.received.length;
    const refused = await post(nextTurn(first, "another message", sandboxA));
    expect(refused.status).toBe(409);
    expect((refused.json as { error: { interrupts: Interrupt[] } }).error.interrupts.map((interrupt) => interrupt.id)).toEqual(["perm-1"]);
    expect(methodsSince(before)).toEqual([]);
  });

  it("a request with no fence changes nothing: no GetTask, the stored interrupts stand", async () => {
    const { first, taskId, contextId } = await parkedUnderA();
    await harness.kernel.addWaiting(taskId, { pendingPermissions: [{ ...deleteProjection, requestTaskId: taskId, contextId }] });
    const before = harness.kernel.received.length;
    const refused = await post(runInput("no fence", { threadId: first.threadId }));
    expect(refused.status).toBe(409);
    expect((refused.json as { error: { interrupts: Interrupt[] } }).error.interrupts.map((interrupt) => interrupt.id)).toEqual(["perm-1"]);
    expect(methodsSince(before)).toEqual([]);
    const store = new FileThreadStore({ stateDir: harness.stateDir });
    expect((await store.load(first.threadId))?.executionFence).toEqual(fenceOf(sandboxA));
  });
});
