/**
 * `npm run soak`: many pages reconnecting at once to one long conversation
 * of large turns (30 tasks of 1 MiB of text each). Each snapshot stops at
 * its budget and says so, every stream ends, and the heap grows by no more
 * than what the process budget allows plus the reads in flight: without
 * the budget each reconnect held the whole conversation, several times
 * over, and a dozen at once took the process down.
 */
import os from "node:os";
import type { ServerResponse } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { EventType } from "@ag-ui/core";
import { HISTORY_TRUNCATED_EVENT } from "../lib/a2a/history-messages.js";
import { startService, type RunningService } from "../lib/server.js";
import { startHostileKernel, type HostileKernel } from "../spec/support/hostile-kernel.js";
import { postRun, runInput, testConfig } from "../spec/support/service.js";

const MIB = 1024 * 1024;
const TASKS = 30;
const RECONNECTS = 16;

declare const gc: () => void;

describe("reconnects to a long conversation of large turns, many at once", () => {
  let kernel: HostileKernel;
  let service: RunningService;
  let connectUrl: string;

  beforeAll(async () => {
    kernel = await startHostileKernel();
    service = await startService(testConfig({ a2aUrl: kernel.url }));
    const first = runInput("hello", { forwardedProps: { iacCode: { schemaVersion: 1, rosInvocationId: "ros-1", cwd: os.tmpdir() } } });
    expect((await postRun(service.url, first)).status).toBe(200);
    const contextId = (kernel.calls("SendStreamingMessage")[0]!.params.message as { contextId: string }).contextId;
    const tasks = Array.from({ length: TASKS }, (_, index) => ({
      id: `big-${index}`,
      contextId,
      status: { state: "TASK_STATE_COMPLETED", timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, index)).toISOString() },
      history: [
        { messageId: `question-${index}`, role: "ROLE_USER", parts: [{ text: `question ${index}` }] },
        { messageId: `answer-${index}`, role: "ROLE_AGENT", parts: [{ text: "x".repeat(MIB) }] },
      ],
    }));
    const json = (res: ServerResponse, id: unknown, result: unknown) => {
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ jsonrpc: "2.0", id, result }));
    };
    kernel.answer("ListTasks", (request, res) =>
      json(res, request.id, { tasks: tasks.map(({ history: _history, ...task }) => task).reverse(), nextPageToken: "" }),
    );
    kernel.answer("GetTask", (request, res) => {
      const task = tasks.find(({ id }) => id === request.params.id);
      if (!task) return false;
      json(res, request.id, task);
    });
    connectUrl = `${service.url}/extensions/iac-code/v1/threads/${encodeURIComponent(first.threadId)}/connect`;
  });
  afterAll(async () => {
    await service.close();
    await kernel.close();
  });

  it(`${RECONNECTS} at once: each stops at its budget and says so, and the heap stays bounded`, async () => {
    gc();
    const heapBefore = process.memoryUsage().heapUsed;
    let peak = heapBefore;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().heapUsed)), 5);
    // Each stream checked as it ends and let go, so what stays after is the service's, not the test's.
    const connect = async () => {
      const { status, events } = await postRun(connectUrl, {});
      expect(status).toBe(200);
      expect(events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED });
      expect(events.some((event) => event.type === EventType.CUSTOM && event.name === HISTORY_TRUNCATED_EVENT)).toBe(true);
    };
    await Promise.all(Array.from({ length: RECONNECTS }, connect));
    clearInterval(sampler);
    gc();
    const growth = process.memoryUsage().heapUsed - heapBefore;
    console.log(`peak heap growth ${Math.round((peak - heapBefore) / MIB)} MiB, after ${Math.round(growth / MIB)} MiB`);
    // The test's own copies of the streams count too: 16 bodies of up to 4 MiB, read as text and parsed.
    expect(peak - heapBefore).toBeLessThan(768 * MIB);
    expect(growth).toBeLessThan(64 * MIB);
  });
});
