import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { lastValueFrom, toArray } from "rxjs";
import { A2AClient, type JsonRpcResult } from "../../../lib/a2a/client.js";
import { startReplayKernel, type ReplayKernel } from "../../../lib/kernel/replay-kernel.js";
import { liveEvents } from "../../../lib/threads/recovery.js";
import { script } from "../../support/service.js";

/**
 * A task can settle between the `GetTask` that found it working and the
 * `SubscribeToTask` that follows it (an observer attaching, a resume or a
 * dropped stream re-attaching, just as the answer ends). A 1.0 kernel then
 * refuses the subscription (-32004, the task is terminal): the follower
 * must end as the task ended, not with an error.
 */
describe("liveEvents on a task that settled before its subscription", () => {
  let kernel: ReplayKernel;
  let a2a: A2AClient;
  beforeAll(async () => {
    kernel = await startReplayKernel({
      timeScale: 0,
      script: () => [script.task(), script.status("WORKING", undefined, "Done. "), script.status("COMPLETED")],
    });
    a2a = new A2AClient({ url: kernel.url });
  });
  afterAll(() => kernel.close());

  it("ends with the task's settled state as GetTask tells it, without its text", async () => {
    const frames: JsonRpcResult[] = await lastValueFrom(
      a2a.sendStreamingMessage({ message: { messageId: "m-1", role: "ROLE_USER", parts: [{ text: "hello" }] } }).pipe(toArray()),
    );
    const taskId = (frames[0]!.task as { id: string }).id;

    const signals = await lastValueFrom(liveEvents(a2a, taskId).pipe(toArray()));

    expect(kernel.received.map((call) => call.method).slice(-2)).toEqual(["SubscribeToTask", "GetTask"]);
    expect(signals).toContainEqual(expect.objectContaining({ kind: "task-state", state: "completed" }));
    expect(signals.some((signal) => signal.kind === "text")).toBe(false);
  });
});
