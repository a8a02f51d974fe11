/**
 * The agents the specs run read a stream that breaks as a client does (the
 * run fails with the break) and leave nothing behind: @ag-ui/client's
 * rethrown cancel (see `quietCancelFetch`) would otherwise fail this test,
 * as Jest fails the test an unhandled rejection happens in.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { httpAgent, runHttpAgent, userMessage } from "./http-agent.js";

describe("an agent whose stream breaks", () => {
  let server: http.Server;
  let url: string;

  beforeAll(async () => {
    // One event, then the socket closes with the chunked body unfinished.
    server = http.createServer((req, res) => {
      req.resume();
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(`data: ${JSON.stringify({ type: "RUN_STARTED", threadId: "t", runId: "r" })}\n\n`, () => res.socket?.destroy());
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("fails its run with the break, and its reader's cancel rejects nothing nobody handles", async () => {
    const run = await runHttpAgent(httpAgent(url, { messages: [userMessage("hello")] }));
    expect(run.events.map((event) => event.type)).toEqual(["RUN_STARTED"]);
    expect(run.error).toMatchObject({ name: "TypeError", message: "terminated" });
    // The cancel settles in microtasks once the read failed; Node reports an unhandled rejection before the next macrotask.
    await new Promise((resolve) => setImmediate(resolve));
  });
});
