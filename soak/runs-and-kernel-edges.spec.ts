/**
 * `npm run soak`: issue 24's cases on runs and the kernel edge, at a scale
 * `npm test` does not try: handoff runs whose clients leave at random
 * moments, slow readers side by side (some slower than what wakes the
 * service's socket), silent kernels, frames outside their
 * JSON-RPC envelope, a kernel flooding its output, and bodies of a million
 * values. Each ends with the service still answering its probes.
 */
import net from "node:net";
import os from "node:os";
import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { EventType } from "@ag-ui/core";
import fc from "fast-check";
import { contextIdFor } from "../lib/a2a/request-mapping.js";
import { loadConfig, type Config } from "../lib/config.js";
import { startService, type RunningService } from "../lib/server.js";
import { expectValidRun } from "../spec/support/agui.js";
import { startBurstKernel, type BurstKernel } from "../spec/support/burst-kernel.js";
import { startHostileKernel, type HostileKernel } from "../spec/support/hostile-kernel.js";
import { captureLogs } from "../spec/support/logs.js";
import { parseSse } from "../spec/support/service-process.js";
import { postRun, runInput, testConfig, uniqueId, waitFor } from "../spec/support/service.js";

const serviceConfig = (overrides: Partial<Config>): Config => ({ ...loadConfig([], {}), ...testConfig(overrides) });
const healthy = async (service: RunningService) => expect((await fetch(`${service.url}/health`)).status).toBe(200);

describe("handoff runs whose clients leave at any moment", () => {
  let kernel: BurstKernel;
  let service: RunningService;
  beforeAll(async () => {
    kernel = await startBurstKernel();
    service = await startService(testConfig({ a2aUrl: kernel.url }));
  });
  afterAll(async () => {
    await service.close();
    await kernel.close();
  });

  it("cancels every task and frees every thread, 100 times", async () => {
    const leaveAfter = fc.sample(fc.integer({ min: 0, max: 30 }), 100);
    const threads = await Promise.all(
      leaveAfter.map(async (ms) => {
        const threadId = uniqueId("thread");
        const body = JSON.stringify({
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
          target: { sandboxId: "target" },
        });
        const { hostname, port } = new URL(service.url);
        const socket = net.connect(Number(port), hostname);
        socket.on("error", () => {});
        await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
        socket.write(
          `POST /iac-code/handoff/apply-input HTTP/1.1\r\nHost: ${hostname}:${port}\r\nContent-Type: application/json\r\n` +
            `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
        );
        await new Promise((resolve) => setTimeout(resolve, ms));
        socket.destroy();
        return threadId;
      }),
    );
    const tasksOf = (threadId: string) => kernel.tasks.filter((task) => task.contextId === contextIdFor(threadId));
    await waitFor(() => threads.every((threadId) => tasksOf(threadId).every((task) => task.state === "TASK_STATE_CANCELED")), 60_000);
    const metrics = await (await fetch(`${service.url}/metrics`)).text();
    expect(metrics).toMatch(/^iac_code_agui_streams_active\{stream="run"\} 0$/m);
    await healthy(service);
  });
});

// The second pace is below what wakes the socket: a third of a 4 MiB send buffer per 2 s stall limit is about
// 700 KB/s, and these read about 330 KB/s. (The client's system opens its window in steps of up to a few hundred
// KiB once its buffer grew: slower still, a 2 s limit is short.)
describe.each([
  { title: "at about 0.5 MB/s", stallS: 5, resultMiB: 12, chunkKiB: 5, everyMs: 10 },
  { title: "at about 330 KB/s with a 2 s stall limit", stallS: 2, resultMiB: 8, chunkKiB: 32, everyMs: 100 },
])("slow but steady readers side by side, $title", ({ stallS, resultMiB, chunkKiB, everyMs }) => {
  let kernel: BurstKernel;
  let service: RunningService;
  beforeAll(async () => {
    kernel = await startBurstKernel();
    service = await startService(testConfig({ a2aUrl: kernel.url, clientStallS: stallS }));
  });
  afterAll(async () => {
    await service.close();
    await kernel.close();
  });

  it(`each gets its whole ${resultMiB} MiB tool result, none dropped as stalled`, async () => {
    const readers = await Promise.all(
      Array.from({ length: 4 }, () => readToolResultSlowly(service.url, resultMiB * 1024 * 1024, chunkKiB * 1024, everyMs)),
    );
    for (const { complete, events } of readers) {
      expect(complete).toBe(true);
      await expectValidRun(events);
      expect(events.at(-1)?.type).toBe(EventType.RUN_FINISHED);
    }
    expect(kernel.cancelled).toEqual([]);
  });
});

describe("a kernel that says nothing, and frames outside their envelope", () => {
  let kernel: HostileKernel;
  let service: RunningService;
  beforeAll(async () => {
    kernel = await startHostileKernel();
    kernel.script("silent", () => {});
    service = await startService(serviceConfig({ a2aUrl: kernel.url, kernelFirstByteTimeoutS: 1 }));
  });
  afterAll(async () => {
    await service.close();
    await kernel.close();
  });

  it("ends 50 runs at once on a silent kernel with A2A_UNAVAILABLE, the probes answering meanwhile", async () => {
    const runs = Promise.all(Array.from({ length: 50 }, () => postRun(service.url, runInput("silent"))));
    await healthy(service);
    for (const { events } of await runs) {
      await expectValidRun(events);
      expect(events.at(-1)).toMatchObject({ type: EventType.RUN_ERROR, code: "A2A_UNAVAILABLE" });
    }
  });

  it("shows a frame's text only when its envelope is exactly JSON-RPC 2.0 with the request's id, 300 envelopes", async () => {
    const envelopes = fc.record(
      {
        jsonrpc: fc.constantFrom<unknown>("2.0", "1.0", 2, null, "2.0 "),
        id: fc.constantFrom<unknown>("request", "another", 1, null),
      },
      { requiredKeys: [] },
    );
    let count = 0;
    await fc.assert(
      fc.asyncProperty(envelopes, async (envelope) => {
        const text = `envelope ${++count}`;
        kernel.script(text, ({ startSse, res, opening, request, taskId, contextId }) => {
          startSse();
          const message = { messageId: `${taskId}-m`, role: "ROLE_AGENT", parts: [{ text }] };
          const result = { statusUpdate: { taskId, contextId, status: { state: "TASK_STATE_WORKING", message } } };
          const id = envelope.id === "request" ? request.id : envelope.id;
          const framed = { ...("jsonrpc" in envelope ? { jsonrpc: envelope.jsonrpc } : {}), ...("id" in envelope ? { id } : {}), result };
          const done = { statusUpdate: { taskId, contextId, status: { state: "TASK_STATE_COMPLETED" } } };
          res.end(
            `${opening()}data: ${JSON.stringify(framed)}\n\ndata: ${JSON.stringify({ jsonrpc: "2.0", id: request.id, result: done })}\n\n`,
          );
        });
        const { events } = await postRun(service.url, runInput(text));
        await expectValidRun(events);
        const wellFormed = envelope.jsonrpc === "2.0" && envelope.id === "request";
        expect(events.some((event) => (event as { delta?: string }).delta === text)).toBe(wellFormed);
        if (!wellFormed) expect(events.at(-1)).toMatchObject({ type: EventType.RUN_ERROR, code: "A2A_PROTOCOL_ERROR" });
      }),
      { numRuns: 300 },
    );
  });
});

describe("a managed kernel that floods its output", () => {
  const FLOOD_LINES = 2_000_000;
  let service: RunningService;
  const logs = captureLogs("info");
  beforeAll(async () => {
    const kernel = `
      const http = require("node:http");
      let left = ${FLOOD_LINES};
      const pour = () => { while (left > 0) { left--; if (!process.stdout.write("flood " + left + "\\n")) return void process.stdout.once("drain", pour); } };
      pour();
      http.createServer((_req, res) => res.setHeader("content-type", "application/json").end("{}")).listen(Number(process.argv[1]), "127.0.0.1");
    `;
    service = await startService(
      serviceConfig({ a2aUrl: undefined, a2aDialect: "1.0", kernelCommand: [process.execPath, "-e", kernel, "{port}"] }),
      { log: logs.logger },
    );
  });
  afterAll(() => service.close());

  it("logs 2 million lines as a few thousand records and a count of the rest", async () => {
    const flood = () => logs.records().filter((record) => / stdout: flood \d+$/.test(record.msg)).length;
    const dropped = () =>
      logs.records().reduce((sum, record) => sum + (typeof record.droppedLines === "number" ? record.droppedLines : 0), 0);
    await waitFor(() => flood() + dropped() === FLOOD_LINES, 300_000);
    console.log(`kernel flood: ${flood()} records logged, ${dropped()} lines counted`);
    expect(flood()).toBeLessThan(FLOOD_LINES / 100);
    await healthy(service);
  });
});

describe("bodies of a million values", () => {
  let kernel: BurstKernel;
  let service: RunningService;
  beforeAll(async () => {
    kernel = await startBurstKernel();
    service = await startService(testConfig({ a2aUrl: kernel.url }));
  });
  afterAll(async () => {
    await service.close();
    await kernel.close();
  });

  it("refuses 40 at once as REQUEST_TOO_LARGE, the probes answering meanwhile", async () => {
    const body = `{"messages":[${'"x",'.repeat(1_250_000)}}`;
    const answers = Promise.all(Array.from({ length: 40 }, () => postRun(service.url, body)));
    await healthy(service);
    for (const answer of await answers) expect(answer.json).toMatchObject({ error: { code: "REQUEST_TOO_LARGE" } });
  });
});

/** A run whose kernel sends one tool result of `bytes`, read `chunkBytes` every `everyMs` ms: a slow but steady client. */
async function readToolResultSlowly(serviceUrl: string, bytes: number, chunkBytes: number, everyMs: number) {
  const response = await new Promise<http.IncomingMessage>((resolve, reject) => {
    const { hostname, port } = new URL(serviceUrl);
    const request = http.request(
      { host: hostname, port, method: "POST", path: "/", agent: false, headers: { "content-type": "application/json" } },
      resolve,
    );
    request.on("error", reject);
    request.end(JSON.stringify(runInput(JSON.stringify({ toolResultBytes: bytes }))));
  });
  response.pause();
  const chunks: Buffer[] = [];
  const ticks = setInterval(() => {
    const chunk = (response.read(chunkBytes) ?? response.read()) as Buffer | null;
    if (chunk) chunks.push(chunk);
  }, everyMs);
  await new Promise<void>((resolve) => response.once("close", resolve));
  clearInterval(ticks);
  return { complete: response.complete, events: await parseSse(Buffer.concat(chunks).toString("utf8")) };
}
