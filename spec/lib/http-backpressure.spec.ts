/**
 * A client that stops reading (R-SSE backpressure, see `lib/http/sse-sink.ts`):
 * the service must not buffer the kernel's whole stream for it. Past the
 * sink's backlog limit the client is dropped like a disconnect, and the
 * run's A2A task is cancelled.
 */
import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { A2AClient } from "../../lib/a2a/client.js";
import { runInput, script, startHarness, waitFor, type Harness } from "../support/service.js";

const DELTA = "x".repeat(32 * 1024);
const DELTAS = 768; // 24 MiB: several times what the loopback socket buffers can absorb // 24 MiB: several times what the loopback socket buffers can absorb
const LIMIT = 256 * 1024;

describe("a client that stops reading", () => {
  let harness: Harness;
  const logs: string[] = [];
  beforeAll(async () => {
    harness = await startHarness(
      {
        timeScale: 1,
        script: () => [
          script.task(),
          script.status("WORKING", { iacCodeSessionId: "s-1" }),
          ...Array.from({ length: DELTAS }, () => script.status("WORKING", undefined, DELTA)),
          // Still working long after: only the service can end this task early.
          { delayMs: 600_000, frame: script.status("COMPLETED").frame },
        ],
      },
      {},
      { sse: { maxBacklogBytes: LIMIT }, log: (message) => logs.push(message) },
    );
  });
  afterAll(() => harness.close());

  it("is dropped once its backlog passes the limit, and the run's A2A task is cancelled", async () => {
    const { hostname, port } = new URL(harness.service.url);
    const response = await new Promise<http.IncomingMessage>((resolve, reject) => {
      const request = http.request(
        { host: hostname, port, method: "POST", path: "/", headers: { "content-type": "application/json" } },
        resolve,
      );
      request.on("error", reject);
      request.end(JSON.stringify(runInput("flood")));
    });
    expect(response.statusCode).toBe(200);
    // Not reading: the socket fills, then the service's buffer. Whatever arrives stays queued in the response.
    response.pause();
    const received: Buffer[] = [];
    response.on("data", (chunk: Buffer) => received.push(chunk));
    const closed = new Promise<void>((resolve) => {
      response.once("close", () => resolve());
      response.once("error", () => resolve());
    });

    await waitFor(() => harness.kernel.received.some((call) => call.method === "CancelTask"), 15_000);
    expect(logs.some((line) => /client dropped, \d+ bytes unread/.test(line))).toBe(true);
    const unread = Number(/client dropped, (\d+) bytes unread/.exec(logs.find((line) => line.includes("client dropped"))!)![1]);
    expect(unread).toBeGreaterThan(LIMIT);
    expect(unread).toBeLessThan(LIMIT + 2 * DELTA.length);

    // What reached the client is what the sockets held: far less than the stream, and no end of run.
    response.resume();
    await closed;
    const text = Buffer.concat(received).toString("utf8");
    expect(text.length).toBeLessThan((DELTAS * DELTA.length) / 2);
    expect(text).not.toContain('"RUN_FINISHED"');

    const cancel = harness.kernel.received.find((call) => call.method === "CancelTask")!;
    const taskId = (cancel.params as { id: string }).id;
    const task = await new A2AClient({ url: harness.kernel.url }).getTask(taskId);
    expect(task).toMatchObject({ status: { state: "TASK_STATE_CANCELED" } });
  });
});
