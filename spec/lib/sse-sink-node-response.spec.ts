/**
 * The sink on a real (Express) response, for what a fake one cannot show.
 * It replaces the header block Node keeps on the response with an equal
 * flat copy (see `flattenHeaderBlock` in `sse-sink.ts`): the response must
 * still say it sent its headers, and send exactly the block it built. And
 * Node corks the socket for each write until the end of the tick, so every
 * write shows unsent bytes at first: a client that keeps up must still get
 * no stall watch (no timer made for it).
 */
import type http from "node:http";
import net from "node:net";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it, jest } from "@jest/globals";
import express from "express";
import { Subject } from "rxjs";
import { EventType } from "@ag-ui/core";
import { pipeToSse } from "../../lib/http/sse-sink.js";
import type { SseItem } from "../../lib/run-pipeline.js";

let server: http.Server | undefined;

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

/** The raw bytes of one GET's answer, read until `until` shows in them. */
function readRaw(port: number, until: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1", () => socket.write("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n"));
    let seen = "";
    socket.setEncoding("latin1");
    socket.on("data", (chunk: string) => {
      seen += chunk;
      if (seen.includes(until)) {
        socket.destroy();
        resolve(seen);
      }
    });
    socket.on("error", reject);
  });
}

describe("pipeToSse on a Node response", () => {
  it("keeps the header block as the very text it sent, and the response still counts its headers as sent", async () => {
    const events = new Subject<SseItem>();
    const kept: { header?: unknown; headersSent?: boolean } = {};
    const app = express();
    app.get("/", (_req, res) => {
      pipeToSse(events, res, () => {});
      kept.header = (res as unknown as { _header?: unknown })._header;
      events.next({ type: EventType.RUN_STARTED, threadId: "t", runId: "r" });
      setImmediate(() => (kept.headersSent = res.headersSent));
    });
    const listening = app.listen(0, "127.0.0.1");
    server = listening;
    await new Promise((resolve) => listening.once("listening", resolve));
    const raw = await readRaw((listening.address() as AddressInfo).port, "RUN_STARTED");
    const sentBlock = raw.slice(0, raw.indexOf("\r\n\r\n") + 4);
    expect(sentBlock).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(sentBlock).toContain("Vary: Accept\r\n");
    expect(kept.header).toBe(sentBlock);
    await new Promise((resolve) => setImmediate(resolve));
    expect(kept.headersSent).toBe(true);
    events.complete();
  });

  it("arms no stall watch for a client that keeps up, though each write shows its bytes unsent until the tick ends", async () => {
    const STALL_MS = 4_000;
    // The watch looks every quarter of the stall time, at most every second.
    const checkEveryMs = 1_000;
    const events = new Subject<SseItem>();
    const app = express();
    let written = 0;
    app.get("/", (_req, res) => {
      pipeToSse(events, res, () => {}, { stallMs: STALL_MS });
      // One event a turn of the loop: each its own write, each corked until its tick ends.
      const writeNext = () => {
        events.next({ type: EventType.TEXT_MESSAGE_CONTENT, messageId: "m", delta: `piece ${written}` });
        if (++written < 20) setImmediate(writeNext);
        else setImmediate(() => events.next({ type: EventType.RUN_FINISHED, threadId: "t", runId: "r" }));
      };
      setImmediate(writeNext);
    });
    const listening = app.listen(0, "127.0.0.1");
    server = listening;
    await new Promise((resolve) => listening.once("listening", resolve));
    const setTimeoutSpy = jest.spyOn(globalThis, "setTimeout");
    try {
      const raw = await readRaw((listening.address() as AddressInfo).port, "RUN_FINISHED");
      expect(raw).toContain("piece 19");
      await new Promise((resolve) => setImmediate(resolve));
      const stallChecks = setTimeoutSpy.mock.calls.filter(([, delay]) => delay === checkEveryMs);
      expect(stallChecks).toHaveLength(0);
    } finally {
      setTimeoutSpy.mockRestore();
    }
    events.complete();
  });
});
