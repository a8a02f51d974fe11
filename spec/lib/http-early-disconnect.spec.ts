/**
 * A client that leaves at any moment of a run's start — having sent its
 * whole POST, before the SSE headers, while the run is admitted, while the
 * kernel has not answered yet — ends the run as any disconnect does: the
 * task the kernel started (if it started one) is cancelled and the thread
 * is free for the next message.
 */
import net from "node:net";
import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { contextIdFor } from "../../lib/a2a/request-mapping.js";
import { startService, type RunningService } from "../../lib/server.js";
import { expectValidRun } from "../support/agui.js";
import { startBurstKernel, type BurstKernel } from "../support/burst-kernel.js";
import { postRun, runInput, testConfig, waitFor, type RunResult } from "../support/service.js";

/** The next message on the thread, retried while the thread is still held (for at most `withinMs`, a deadline, not a bet). */
async function nextRunOn(url: string, threadId: string, withinMs = 15_000): Promise<RunResult> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const result = await postRun(url, runInput("{}", { threadId }));
    const busy = (result.json as { error?: { code?: string } } | undefined)?.error?.code === "THREAD_BUSY";
    if (!busy || Date.now() > deadline) return result;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Sends the whole POST on a raw socket, then closes the socket after `closeAfterMs` (0: as soon as it is written). */
async function postAndClose(serviceUrl: string, body: unknown, closeAfterMs: number): Promise<void> {
  const { hostname, port } = new URL(serviceUrl);
  const json = JSON.stringify(body);
  const socket = net.connect(Number(port), hostname);
  socket.on("error", () => {});
  await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
  const written = new Promise<void>((resolve) =>
    socket.write(
      `POST / HTTP/1.1\r\nHost: ${hostname}:${port}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(json)}\r\n\r\n${json}`,
      () => resolve(),
    ),
  );
  await written;
  if (closeAfterMs > 0) await new Promise((resolve) => setTimeout(resolve, closeAfterMs));
  socket.destroy();
}

describe("a client that leaves while its run is starting", () => {
  let kernel: BurstKernel;
  let service: RunningService;
  beforeAll(async () => {
    kernel = await startBurstKernel();
    service = await startService(testConfig({ a2aUrl: kernel.url }));
  });
  afterAll(async () => {
    kernel.release();
    await service.close();
    await kernel.close();
  });

  const tasksOf = (threadId: string) => kernel.tasks.filter((task) => task.contextId === contextIdFor(threadId));

  it.each([0, 1, 3, 10])(
    "closing %i ms after the whole POST: every task it started is cancelled and the thread is free",
    async (closeAfterMs) => {
      // A task that would run until cancelled: only the service can end it.
      const input = runInput(JSON.stringify({ hold: true }));
      await postAndClose(service.url, input, closeAfterMs);

      const next = await nextRunOn(service.url, input.threadId);
      expect(next.status).toBe(200);
      await expectValidRun(next.events);
      // The run may have ended before its kernel call left: then the kernel has only the next run's task.
      const earlier = tasksOf(input.threadId).slice(0, -1);
      expect(earlier.length).toBeLessThanOrEqual(1);
      await waitFor(() => earlier.every((task) => task.state === "TASK_STATE_CANCELED"));
    },
  );

  it("leaving before the kernel answered its first call: the task is found and cancelled, the thread is free", async () => {
    const input = runInput(JSON.stringify({ hold: true, answerWhenReleased: true }));
    const { hostname, port } = new URL(service.url);
    const request = http.request({
      host: hostname,
      port,
      method: "POST",
      path: "/",
      agent: false,
      headers: { "content-type": "application/json" },
    });
    request.on("error", () => {});
    request.end(JSON.stringify(input));
    await waitFor(() => tasksOf(input.threadId).length === 1);
    request.destroy();

    const [task] = tasksOf(input.threadId);
    await waitFor(() => kernel.cancelled.includes(task!.id));
    const next = await nextRunOn(service.url, input.threadId);
    expect(next.status).toBe(200);
    await expectValidRun(next.events);
  });
});
