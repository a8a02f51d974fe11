/**
 * Slow and bursty clients (R-SSE backpressure, see `lib/http/sse-sink.ts`
 * and `lib/http/flow-gate.ts`), through the real service in front of a
 * kernel that writes as fast as its socket takes it:
 *   - a client that stops reading holds the kernel back (the run stops
 *     reading it), and gets every byte once it reads again;
 *   - one event larger than the high-water mark reaches a reading client;
 *   - only a client that takes nothing for IAC_CODE_AGUI_CLIENT_STALL_S is
 *     dropped, and its task is cancelled.
 */
import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { runHttpRequest, transformHttpEventStream } from "@ag-ui/client";
import { EventType, type AGUIEvent } from "@ag-ui/core";
import { Observable, lastValueFrom, toArray, type Subscribable } from "rxjs";
import { PROTOBUF_MEDIA_TYPE } from "../../lib/http/event-encoding.js";
import { DEFAULT_HIGH_WATER_MARK } from "../../lib/http/sse-sink.js";
import { startService, type RunningService } from "../../lib/server.js";
import { expectValidRun } from "../support/agui.js";
import { deltaText, startBurstKernel, type BurstKernel, type BurstScript } from "../support/burst-kernel.js";
import { decodeEvents } from "../support/event-streams.js";
import { captureLogs } from "../support/logs.js";
import { postRun, runInput, testConfig, waitFor } from "../support/service.js";

/** 20,000 deltas of 1 KiB: about 20 MiB each way, far more than the loopback sockets between the three can hold. */
const DELTAS = 20_000;
const DELTA_BYTES = 1024;

/** A client on node:http whose reading the test turns on and off. */
interface ControlledReader {
  response: http.IncomingMessage;
  received(): number;
  /** Reads on until at least `bytes` more have arrived, then stops reading again. */
  readAbout(bytes: number): Promise<void>;
  /** Reads the rest; resolves with the whole text once the service ends the stream. */
  readToEnd(): Promise<string>;
  /** Everything that arrived so far, as bytes (a protobuf stream). */
  bytes(): Buffer;
  closed: Promise<void>;
}

async function openPausedRun(serviceUrl: string, body: unknown, headers: Record<string, string> = {}): Promise<ControlledReader> {
  const { hostname, port } = new URL(serviceUrl);
  const response = await new Promise<http.IncomingMessage>((resolve, reject) => {
    const request = http.request(
      { host: hostname, port, method: "POST", path: "/", agent: false, headers: { "content-type": "application/json", ...headers } },
      resolve,
    );
    request.on("error", reject);
    request.end(JSON.stringify(body));
  });
  expect(response.statusCode).toBe(200);
  response.pause();
  const chunks: Buffer[] = [];
  let bytes = 0;
  let wanted: { until: number; done: () => void } | undefined;
  response.on("data", (chunk: Buffer) => {
    chunks.push(chunk);
    bytes += chunk.length;
    if (wanted && bytes >= wanted.until) {
      response.pause();
      wanted.done();
      wanted = undefined;
    }
  });
  const ended = new Promise<void>((resolve) => response.once("end", () => resolve()));
  const closed = new Promise<void>((resolve) => {
    response.once("close", () => resolve());
    response.once("error", () => resolve());
  });
  return {
    response,
    received: () => bytes,
    readAbout: (more) =>
      new Promise((resolve) => {
        wanted = { until: bytes + more, done: resolve };
        response.resume();
      }),
    readToEnd: async () => {
      wanted = undefined;
      response.resume();
      await ended;
      return Buffer.concat(chunks).toString("utf8");
    },
    bytes: () => Buffer.concat(chunks),
    closed,
  };
}

async function parseSse(raw: string): Promise<AGUIEvent[]> {
  const replay = () => Promise.resolve(new Response(raw, { status: 200, headers: { "content-type": "text/event-stream" } }));
  // @ag-ui/client bundles its own rxjs: adopt its Observable through the interop contract.
  const parsed = transformHttpEventStream(runHttpRequest(replay)) as unknown as Subscribable<AGUIEvent>;
  return lastValueFrom(new Observable<AGUIEvent>((subscriber) => parsed.subscribe(subscriber)).pipe(toArray()));
}

const burst = (script: BurstScript) => runInput(JSON.stringify(script));

describe("a client that reads slowly, or in bursts", () => {
  let kernel: BurstKernel;
  let service: RunningService;
  /** What the sink reported after each write: the response's unsent bytes, and whether the run reads its kernel. */
  let maxUnsent = 0;
  let readingKernel = true;
  beforeAll(async () => {
    kernel = await startBurstKernel();
    service = await startService(testConfig({ a2aUrl: kernel.url }), {
      sse: {
        onPressure: (unsent, reading) => {
          maxUnsent = Math.max(maxUnsent, unsent);
          readingKernel = reading;
        },
      },
    });
  });
  afterAll(async () => {
    await service.close();
    await kernel.close();
  });

  it("holds the kernel back while it does not read, and gets every byte of the run when it reads again", async () => {
    maxUnsent = 0;
    const reader = await openPausedRun(service.url, burst({ deltas: DELTAS, deltaBytes: DELTA_BYTES }));
    const task = () => kernel.tasks.at(-1)!;
    for (let pause = 0; pause < 3; pause++) {
      // Not reading: the sockets fill, the response's backlog passes the mark, the run stops reading, TCP stops the kernel.
      await waitFor(() => !readingKernel && task().waitingForDrain, 15_000);
      expect(task().sent).toBeLessThan(DELTAS);
      // Bounded: the mark, plus what one piece of the kernel's stream projects to, plus one 64 KiB write.
      expect(maxUnsent).toBeLessThanOrEqual(DEFAULT_HIGH_WATER_MARK + 256 * 1024);
      await reader.readAbout(3 * 1024 * 1024);
    }
    const raw = await reader.readToEnd();

    const events = await parseSse(raw);
    await expectValidRun(events);
    expect(events.at(-1)!.type).toBe(EventType.RUN_FINISHED);
    const deltas = events.flatMap((event) => (event.type === EventType.TEXT_MESSAGE_CONTENT ? [event.delta] : []));
    expect(deltas).toHaveLength(DELTAS);
    deltas.forEach((delta, index) => {
      if (delta !== deltaText(index, DELTA_BYTES)) throw new Error(`delta ${index} is not the kernel's`);
    });
    expect(kernel.cancelled).not.toContain(task().id);
  });

  it("does the same for a client that asked for protobuf: its frames wait as SSE records do, and all arrive", async () => {
    maxUnsent = 0;
    const reader = await openPausedRun(service.url, burst({ deltas: DELTAS, deltaBytes: DELTA_BYTES }), { accept: PROTOBUF_MEDIA_TYPE });
    expect(reader.response.headers["content-type"]).toBe(PROTOBUF_MEDIA_TYPE);
    const task = () => kernel.tasks.at(-1)!;
    for (let pause = 0; pause < 2; pause++) {
      await waitFor(() => !readingKernel && task().waitingForDrain, 15_000);
      expect(task().sent).toBeLessThan(DELTAS);
      expect(maxUnsent).toBeLessThanOrEqual(DEFAULT_HIGH_WATER_MARK + 256 * 1024);
      await reader.readAbout(3 * 1024 * 1024);
    }
    await reader.readToEnd();

    const events = await decodeEvents(reader.bytes(), PROTOBUF_MEDIA_TYPE);
    await expectValidRun(events);
    expect(events.at(-1)!.type).toBe(EventType.RUN_FINISHED);
    const deltas = events.flatMap((event) => (event.type === EventType.TEXT_MESSAGE_CONTENT ? [event.delta] : []));
    expect(deltas).toHaveLength(DELTAS);
    deltas.forEach((delta, index) => {
      if (delta !== deltaText(index, DELTA_BYTES)) throw new Error(`delta ${index} is not the kernel's`);
    });
    expect(kernel.cancelled).not.toContain(task().id);
  });

  it("delivers one event larger than the high-water mark whole: a 2 MiB tool result", async () => {
    const size = 2 * 1024 * 1024;
    const result = await postRun(service.url, burst({ toolResultBytes: size, deltas: 100 }));
    expect(result.status).toBe(200);
    await expectValidRun(result.events);
    expect(result.events.at(-1)!.type).toBe(EventType.RUN_FINISHED);
    const toolResult = result.events.find((event) => event.type === EventType.TOOL_CALL_RESULT);
    expect(toolResult).toMatchObject({ content: "r".repeat(size) });
    expect(result.events.filter((event) => event.type === EventType.TEXT_MESSAGE_CONTENT)).toHaveLength(100);
  });
});

describe("a client that takes nothing for IAC_CODE_AGUI_CLIENT_STALL_S", () => {
  let kernel: BurstKernel;
  let service: RunningService;
  const logs = captureLogs();
  beforeAll(async () => {
    kernel = await startBurstKernel();
    service = await startService(testConfig({ a2aUrl: kernel.url, clientStallS: 1 }), { log: logs.logger });
  });
  afterAll(async () => {
    await service.close();
    await kernel.close();
  });

  it("is dropped as a client that left: the connection is closed and the run's A2A task cancelled", async () => {
    const reader = await openPausedRun(service.url, burst({ deltas: DELTAS, deltaBytes: DELTA_BYTES, hold: true }));
    await waitFor(() => kernel.tasks.length > 0 && kernel.cancelled.includes(kernel.tasks.at(-1)!.id), 15_000);
    const dropped = logs.records().find((record) => /took nothing for 1 s/.test(record.msg));
    expect(dropped).toMatchObject({
      level: "info",
      threadId: expect.any(String),
      runId: expect.any(String),
      unsentBytes: expect.any(Number),
    });
    // What the sockets still held reaches the client, then the connection's end: no end of run.
    reader.response.resume();
    await reader.closed;
    expect(reader.response.complete).toBe(false);
  });
});
