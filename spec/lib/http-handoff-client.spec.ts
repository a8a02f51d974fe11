/**
 * The run an `apply-input` delivers is tied to its client as a streamed run
 * is (issue 24, item 4): counted while it goes, its task cancelled and its
 * thread let go when the client leaves first, and stopped by a drain.
 */
import net from "node:net";
import os from "node:os";
import { afterEach, beforeEach, describe, expect, it } from "@jest/globals";
import { contextIdFor } from "../../lib/a2a/request-mapping.js";
import { startService, type RunningService } from "../../lib/server.js";
import { expectValidRun } from "../support/agui.js";
import { startBurstKernel, type BurstKernel } from "../support/burst-kernel.js";
import { postRun, runInput, testConfig, uniqueId, waitFor, type RunResult } from "../support/service.js";

/** An apply-input whose pending input is a burst script: `hold` keeps its task running until it is cancelled. */
const applyInput = (threadId: string) => ({
  receipt: {
    protocol: "agui",
    cwd: os.tmpdir(),
    userId: "user-1",
    mode: "normal",
    guidanceId: uniqueId("guide"),
    aguiIdentity: { threadId, executionId: "exec-1", rosInvocationId: "ros-1" },
  },
  pendingInput: { query: JSON.stringify({ hold: true }) },
  inputDigest: "d".repeat(64),
  target: { sandboxId: "target", activationId: "a", leaseId: "l", runId: "run-1" },
});

/** The next message on the thread, as the same user, retried while the thread is still held (a deadline, not a bet). */
async function nextRunOn(url: string, threadId: string, withinMs = 15_000): Promise<RunResult> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const result = await postRun(url, runInput("{}", { threadId }, { userId: "user-1" }));
    const busy = (result.json as { error?: { code?: string } } | undefined)?.error?.code === "THREAD_BUSY";
    if (!busy || Date.now() > deadline) return result;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Sends the whole POST on a raw socket, which the test closes when it means the client to leave. */
async function openApplyInput(serviceUrl: string, body: unknown): Promise<{ socket: net.Socket; answer: Promise<string> }> {
  const { hostname, port } = new URL(serviceUrl);
  const json = JSON.stringify(body);
  const socket = net.connect(Number(port), hostname);
  socket.on("error", () => {});
  await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
  let answer = "";
  socket.setEncoding("utf8");
  socket.on("data", (chunk: string) => (answer += chunk));
  const ended = new Promise<string>((resolve) => socket.once("close", () => resolve(answer)));
  socket.write(
    `POST /iac-code/handoff/apply-input HTTP/1.1\r\nHost: ${hostname}:${port}\r\nContent-Type: application/json\r\n` +
      `Connection: close\r\nContent-Length: ${Buffer.byteLength(json)}\r\n\r\n${json}`,
  );
  return { socket, answer: ended };
}

describe("the run an apply-input delivers", () => {
  let kernel: BurstKernel;
  let service: RunningService;
  beforeEach(async () => {
    kernel = await startBurstKernel();
    service = await startService(testConfig({ a2aUrl: kernel.url }));
  });
  afterEach(async () => {
    await service.close();
    await kernel.close();
  });

  const tasksOf = (threadId: string) => kernel.tasks.filter((task) => task.contextId === contextIdFor(threadId));
  const metric = async (pattern: RegExp) => {
    const text = await (await fetch(`${service.url}/metrics`)).text();
    return Number(pattern.exec(text)?.[1] ?? 0);
  };
  const activeRunStreams = () => metric(/^iac_code_agui_streams_active\{stream="run"\} (\d+)$/m);
  const abandonedRuns = () => metric(/^iac_code_agui_runs_ended_total\{kind="new",outcome="abandoned",code=""\} (\d+)$/m);

  it("is counted while it goes; when its client leaves, its task is cancelled and the thread is free", async () => {
    const threadId = uniqueId("thread");
    const { socket } = await openApplyInput(service.url, applyInput(threadId));
    await waitFor(() => tasksOf(threadId).some((task) => task.state === "TASK_STATE_WORKING"));
    expect(await activeRunStreams()).toBe(1);

    socket.destroy();
    await waitFor(() => tasksOf(threadId).every((task) => task.state === "TASK_STATE_CANCELED"));
    expect(kernel.cancelled).toEqual([tasksOf(threadId)[0]!.id]);
    const next = await nextRunOn(service.url, threadId);
    expect(next.json).toBeUndefined();
    expect(next.status).toBe(200);
    await expectValidRun(next.events);
    expect(await activeRunStreams()).toBe(0);
    expect(await abandonedRuns()).toBe(1);
  });

  it("is in flight for a drain, which stops it and cancels its task", async () => {
    const threadId = uniqueId("thread");
    const { answer } = await openApplyInput(service.url, applyInput(threadId));
    await waitFor(() => tasksOf(threadId).some((task) => task.state === "TASK_STATE_WORKING"));

    const report = await service.shutdown({ drainMs: 0 });
    expect(report).toEqual({ inFlight: 1, ended: 0, stopped: 1 });
    expect(tasksOf(threadId).map((task) => task.state)).toEqual(["TASK_STATE_CANCELED"]);
    // The client is answered once the run has ended: the kernel asked again, as after any delivery.
    expect(await answer).toMatch(/^HTTP\/1\.1 200 [\s\S]*"agui_input_delivery_required"/);
  });
});
