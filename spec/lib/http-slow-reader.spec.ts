/**
 * A client that reads slowly but steadily is not a stalled one (issue 24,
 * item 3): a tool result of many megabytes is one write, which Node counts
 * as done only when its last byte left; what the operating system takes of
 * it meanwhile is progress, and the client keeps its run.
 */
import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { EventType } from "@ag-ui/core";
import { startService, type RunningService } from "../../lib/server.js";
import { expectValidRun } from "../support/agui.js";
import { startBurstKernel, type BurstKernel } from "../support/burst-kernel.js";
import { captureLogs } from "../support/logs.js";
import { parseSse } from "../support/service-process.js";
import { runInput, testConfig } from "../support/service.js";

/** Most of the kernel's largest record: one TOOL_CALL_RESULT that takes the reader several stall limits to read. */
const TOOL_RESULT_BYTES = 15 * 1024 * 1024;
const STALL_S = 4;
/**
 * The reader takes 8 KiB per 10 ms tick, about 0.8 MB/s: a third of the loopback send buffer (what the system frees
 * before it wakes the socket) in under two seconds, while the whole result takes about three stall limits.
 */
const TICK_MS = 10;
const TICK_BYTES = 8 * 1024;

/** POSTs the run and reads its answer `tickBytes` per tick, never faster, until the service ends it or drops it. */
async function readSlowly(
  serviceUrl: string,
  body: unknown,
  { tickMs = TICK_MS, tickBytes = TICK_BYTES } = {},
): Promise<{ text: string; complete: boolean }> {
  const { hostname, port } = new URL(serviceUrl);
  const response = await new Promise<http.IncomingMessage>((resolve, reject) => {
    const request = http.request(
      { host: hostname, port, method: "POST", path: "/", agent: false, headers: { "content-type": "application/json" } },
      resolve,
    );
    request.on("error", reject);
    request.end(JSON.stringify(body));
  });
  expect(response.statusCode).toBe(200);
  response.pause();
  const chunks: Buffer[] = [];
  const ticks = setInterval(() => {
    const chunk = (response.read(tickBytes) ?? response.read()) as Buffer | null;
    if (chunk) chunks.push(chunk);
  }, tickMs);
  await new Promise<void>((resolve) => {
    response.once("end", resolve);
    response.once("close", resolve);
    response.once("error", () => resolve());
  });
  clearInterval(ticks);
  return { text: Buffer.concat(chunks).toString("utf8"), complete: response.complete };
}

describe("a client that reads a large event slowly but steadily", () => {
  let kernel: BurstKernel;
  let service: RunningService;
  const logs = captureLogs();
  beforeAll(async () => {
    kernel = await startBurstKernel();
    service = await startService(testConfig({ a2aUrl: kernel.url, clientStallS: STALL_S }), { log: logs.logger });
  });
  afterAll(async () => {
    await service.close();
    await kernel.close();
  });

  it("is not taken for a stalled one: it gets the whole run, and its task is not cancelled", async () => {
    const { text, complete } = await readSlowly(service.url, runInput(JSON.stringify({ toolResultBytes: TOOL_RESULT_BYTES, deltas: 3 })));
    expect(logs.records().filter((record) => /took nothing/.test(record.msg))).toEqual([]);
    expect(complete).toBe(true);
    const events = await parseSse(text);
    await expectValidRun(events);
    expect(events.at(-1)!.type).toBe(EventType.RUN_FINISHED);
    expect(events.find((event) => event.type === EventType.TOOL_CALL_RESULT)).toMatchObject({ content: "r".repeat(TOOL_RESULT_BYTES) });
    expect(kernel.cancelled).toEqual([]);
  }, 60_000);
});

/**
 * Slower still: 32 KiB per 100 ms, about 330 KB/s, so that between two
 * wake-ups of the service's socket (a third of a send buffer of up to 4 MiB
 * taken) more than the stall limit goes by, while the client's system opens
 * its window again about every 64 KiB. Only what the system holds
 * unacknowledged for the connection shows that progress (Linux).
 */
describe("a client that reads slower than the socket wakes its writer", () => {
  const SLOW_STALL_S = 2;
  const RESULT_BYTES = 10 * 1024 * 1024;
  let kernel: BurstKernel;
  let service: RunningService;
  const logs = captureLogs();
  beforeAll(async () => {
    kernel = await startBurstKernel();
    service = await startService(testConfig({ a2aUrl: kernel.url, clientStallS: SLOW_STALL_S }), { log: logs.logger });
  });
  afterAll(async () => {
    await service.close();
    await kernel.close();
  });

  (process.platform === "linux" ? it : it.skip)(
    "keeps its run to the end, and its task",
    async () => {
      const { text, complete } = await readSlowly(service.url, runInput(JSON.stringify({ toolResultBytes: RESULT_BYTES, deltas: 3 })), {
        tickMs: 100,
        tickBytes: 32 * 1024,
      });
      expect(logs.records().filter((record) => /took nothing/.test(record.msg))).toEqual([]);
      expect(complete).toBe(true);
      const events = await parseSse(text);
      await expectValidRun(events);
      expect(events.at(-1)!.type).toBe(EventType.RUN_FINISHED);
      expect(kernel.cancelled).toEqual([]);
    },
    90_000,
  );
});
