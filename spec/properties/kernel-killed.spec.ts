/**
 * The kernel dies at a random point of a stream (its connection is
 * destroyed mid-record): the client gets RUN_ERROR with every span
 * closed, the A2A task is cancelled rather than left running, and the
 * thread takes its next message. `npm run soak` also SIGKILLs a real
 * kernel process (`soak/kernel-killed.spec.ts`).
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import fc from "fast-check";
import { A2AClient } from "../../lib/a2a/client.js";
import { startReplayKernel, type ReplayKernel } from "../../lib/kernel/replay-kernel.js";
import { startService, type RunningService } from "../../lib/server.js";
import { expectValidRun } from "../support/agui.js";
import { startCuttingProxy, type CuttingProxy } from "../support/cutting-proxy.js";
import { postRun, runInput, script, testConfig, waitFor } from "../support/service.js";

const tool = (status: string) =>
  script.status("WORKING", { tool: { status, toolUseId: "tool-1", name: "ros_deploy_stack", toolInput: { stack: "demo" } } });
/** Everything a run can have open, then a long silence: the cut always lands while the task works. */
const LONG_RUN = [
  script.task(),
  script.status("WORKING", { iacCodeSessionId: "session-1" }),
  script.status("WORKING", { thinking: { type: "raw_thinking", text: "Let me think." } }),
  script.status("WORKING", undefined, "Deploying "),
  tool("started"),
  script.status("WORKING", undefined, "the stack"),
  tool("input_complete"),
  script.status("WORKING", { usage: { provider: "dashscope", model: "qwen-max", inputTokens: 10, outputTokens: 5 } }),
  { delayMs: 600_000, frame: script.status("COMPLETED").frame },
];
const RECORDS = LONG_RUN.length - 1;

describe("a kernel that dies mid-stream", () => {
  let kernel: ReplayKernel;
  let proxy: CuttingProxy;
  let service: RunningService;
  beforeAll(async () => {
    kernel = await startReplayKernel({
      timeScale: 1,
      script: (turn) =>
        turn.text === "again" ? [script.task(), script.status("WORKING", undefined, "Back."), script.status("COMPLETED")] : LONG_RUN,
    });
    proxy = await startCuttingProxy(kernel.url);
    service = await startService(testConfig({ a2aUrl: proxy.url }));
  });
  afterAll(async () => {
    await service.close();
    await proxy.close();
    await kernel.close();
  });

  it("ends the run in RUN_ERROR with every span closed, and frees the thread for its next message", async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: RECORDS - 1 }), fc.nat(120), async (records, extraBytes) => {
        proxy.cutNext({ records, extraBytes });
        const input = runInput("long");
        const { status, events } = await postRun(service.url, input);
        expect(status).toBe(200);
        await expectValidRun(events);
        expect(events.at(-1)).toMatchObject({ type: "RUN_ERROR", code: "A2A_UNAVAILABLE" });
        await proxy.cutDone();

        const next = await postRun(service.url, { ...runInput("again"), threadId: input.threadId });
        expect(next.status).toBe(200);
        await expectValidRun(next.events);
        expect(next.events.at(-1)).toMatchObject({ type: "RUN_FINISHED" });
      }),
      { numRuns: 12 },
    );
  }, 60_000);

  // The cut can take the task's first frames with it (the proxy, like a dying kernel, drops what it
  // had not flushed): the run then never learns its task id, and finds the task by its context.
  it("cancels the A2A task the cut left running, even when the cut took the frames that named it", async () => {
    const cancelsBefore = kernel.received.filter((call) => call.method === "CancelTask").length;
    proxy.cutNext({ records: 3, extraBytes: 10 });
    const { events } = await postRun(service.url, runInput("long"));
    expect(events.at(-1)).toMatchObject({ type: "RUN_ERROR" });
    await waitFor(() => kernel.received.filter((call) => call.method === "CancelTask").length > cancelsBefore, 3_000);
    const cancel = kernel.received.filter((call) => call.method === "CancelTask").at(-1)!;
    const task = await new A2AClient({ url: kernel.url }).getTask((cancel.params as { id: string }).id);
    expect(task).toMatchObject({ status: { state: "TASK_STATE_CANCELED" } });
  }, 20_000);
});
