/**
 * A slow-headers flood does not take the service off the air: sockets
 * that send part of a request head and hold fill the connection cap, yet
 * `/health`, `/ready` and a new run are answered (each new connection
 * closes the longest-idle one), a run already streaming is left alone, and
 * a head that never ends is answered 408 once the header timeout passes.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { EventType } from "@ag-ui/core";
import { connect, type Socket } from "node:net";
import { HEADERS_TIMEOUT_MS } from "../../lib/http/connection-guard.js";
import { expectValidRun } from "../support/agui.js";
import { parseSse } from "../support/service-process.js";
import { postRun, runInput, startHarness, type Harness } from "../support/service.js";

const MAX_CONNECTIONS = 48;
/** Well past the cap: without room made, every later connection is closed as it arrives. */
const FLOOD = MAX_CONNECTIONS * 2;

let harness: Harness;
let releaseHeld: () => void = () => undefined;
const held = new Promise<void>((resolve) => (releaseHeld = resolve));
const flood: Socket[] = [];

beforeAll(async () => {
  harness = await startHarness(
    { holdLine: (turn, index, count) => (turn.text === "held-chat" && index === count - 1 ? held : undefined) },
    { maxConnections: MAX_CONNECTIONS },
  );
});
afterAll(async () => {
  releaseHeld();
  for (const socket of flood) socket.destroy();
  await harness.close();
});

/** A socket that sends the start of a request head and nothing more; resolves once connected and written. */
function slowHead(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => {
      socket.write("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: 1\r\n", () => resolve(socket));
    });
    // Closed by the server (evicted, or refused past the cap) or reset: still a socket of the flood.
    socket.on("error", () => undefined);
    socket.once("close", () => resolve(socket));
    socket.once("timeout", () => reject(new Error("connect timed out")));
  });
}

const closed = (socket: Socket) => new Promise<void>((resolve) => (socket.destroyed ? resolve() : socket.once("close", () => resolve())));

describe("a slow-headers flood", () => {
  it("leaves the probes and a new run answered, and a streaming run untouched", async () => {
    const { url } = harness.service;
    const port = Number(new URL(url).port);
    // A run streaming before the flood: its connection has a request in progress.
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify(runInput("held-chat")),
    });
    expect(response.status).toBe(200);
    const streaming = response.text();

    for (let i = 0; i < FLOOD; i++) flood.push(await slowHead(port));
    // The cap is full of heads that never end.
    expect(flood.filter((socket) => !socket.destroyed).length).toBeGreaterThanOrEqual(MAX_CONNECTIONS - 20);

    const health = await fetch(`${url}/health`);
    expect(health.status).toBe(200);
    const ready = await fetch(`${url}/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ ready: true });
    const run = await postRun(url, runInput("chat"));
    expect(run.status).toBe(200);
    await expectValidRun(run.events);
    expect(run.events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });

    releaseHeld();
    const events = await parseSse(await streaming);
    await expectValidRun(events);
    expect(events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });
  });

  it("closes a new connection past the cap when every connection has a request in progress", async () => {
    let releaseBusy: () => void = () => undefined;
    const busyHeld = new Promise<void>((resolve) => (releaseBusy = resolve));
    const busy = await startHarness(
      { holdLine: (turn, index, count) => (turn.text === "held-chat" && index === count - 1 ? busyHeld : undefined) },
      { maxConnections: 2 },
    );
    try {
      const streams = [];
      for (let i = 0; i < 2; i++) {
        const response = await fetch(busy.service.url, {
          method: "POST",
          headers: { "content-type": "application/json", accept: "text/event-stream", connection: "close" },
          body: JSON.stringify(runInput("held-chat")),
        });
        expect(response.status).toBe(200);
        streams.push(response.text());
      }
      // Both connections are streaming: nothing may be closed for a newcomer, so the newcomer goes.
      const probe = await slowHead(Number(new URL(busy.service.url).port));
      await closed(probe);
      await expect(fetch(`${busy.service.url}/health`)).rejects.toThrow();

      releaseBusy();
      for (const stream of streams) {
        const events = await parseSse(await stream);
        await expectValidRun(events);
        expect(events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });
      }
    } finally {
      releaseBusy();
      await busy.close();
    }
  });

  it("answers a head that never ends with 408 once the header timeout has passed", async () => {
    const socket = await slowHead(Number(new URL(harness.service.url).port));
    let answer = "";
    socket.on("data", (chunk: Buffer) => (answer += chunk.toString("latin1")));
    const startedAt = Date.now();
    await closed(socket);
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    // Not before the timeout: an honest slow client has that long.
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS - 1000);
  }, 60_000);
});
