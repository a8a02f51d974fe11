/**
 * `npm run soak`: the brakes of hostile round three, tried at full size and
 * over and over (`npm test` tries each once, small):
 * - a slow-headers flood past the default connection cap, with probes and
 *   runs answered all through it;
 * - sandbox replays whose clients read nothing, with the memory they cost,
 *   and a flood of them past the cap on replays at once;
 * - questions of every size on both stores: the same outcome on each, and
 *   nothing repeated past its bound;
 * - Redis stopped at the end of run after run: never a success unstored.
 */
import http from "node:http";
import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { EventType, type AGUIEvent } from "@ag-ui/core";
import { contextIdFor } from "../lib/a2a/request-mapping.js";
import type { ReplayTurn } from "../lib/kernel/replay-kernel.js";
import { startService } from "../lib/server.js";
import { startRedisServer, type RedisServer } from "../lib/testing/redis-server.js";
import { MAX_REPEATED_INTERRUPTS_BYTES, MAX_SHOWN_INTERRUPTS_BYTES } from "../lib/threads/interrupt-sizes.js";
import { expectValidRun } from "../spec/support/agui.js";
import { postRun, runInput, script, startHarness, testConfig, waitFor, type Harness } from "../spec/support/service.js";

const MiB = 1024 * 1024;
const bytesOf = (value: unknown) => Buffer.byteLength(JSON.stringify(value), "utf8");
const lastOf = (events: readonly AGUIEvent[]) => events.at(-1) as (AGUIEvent & { code?: string; outcome?: { type: string } }) | undefined;

describe("a slow-headers flood past the default cap", () => {
  let harness: Harness;
  const flood: Socket[] = [];
  beforeAll(async () => {
    harness = await startHarness({}, { maxConnections: 1024 });
  });
  afterAll(async () => {
    for (const socket of flood) socket.destroy();
    await harness.close();
  });

  it("answers every probe and run sent while 2,000 sockets hold partial heads", async () => {
    const port = Number(new URL(harness.service.url).port);
    const slowHead = () =>
      new Promise<Socket>((resolve) => {
        const socket = connect(port, "127.0.0.1", () => socket.write("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n", () => resolve(socket)));
        socket.on("error", () => undefined);
        socket.once("close", () => resolve(socket));
      });
    for (let round = 0; round < 20; round++) {
      for (let i = 0; i < 100; i++) flood.push(await slowHead());
      expect((await fetch(`${harness.service.url}/health`)).status).toBe(200);
      expect((await fetch(`${harness.service.url}/ready`)).status).toBe(200);
      const run = await postRun(harness.service.url, runInput("chat"));
      await expectValidRun(run.events);
      expect(lastOf(run.events)).toMatchObject({ type: EventType.RUN_FINISHED });
    }
  });
});

describe("sandbox replays whose clients read nothing", () => {
  it("cost each about its upload, not its whole replay", async () => {
    let readingLast = true;
    // Ten at once, past the default cap of replays (the flood below tries that cap): this measures what each costs.
    const service = await startService(testConfig({ a2aUrl: "http://127.0.0.1:9/", sandboxMaxReplays: 10 }), {
      sse: { onPressure: (_unsent, reading) => (readingLast = reading) },
    });
    const line = (frame: unknown) => JSON.stringify({ delayMs: 0, frame });
    const delta = "y".repeat(2048);
    const fixture = [
      line({ task: { id: "${taskId}", contextId: "${contextId}", status: { state: "TASK_STATE_SUBMITTED" } } }),
      ...Array.from({ length: 3_000 }, () =>
        line({
          statusUpdate: {
            taskId: "${taskId}",
            contextId: "${contextId}",
            status: { state: "TASK_STATE_WORKING", message: { messageId: "m", role: "ROLE_AGENT", parts: [{ text: delta }] } },
          },
        }),
      ),
    ].join("\n");
    const body = JSON.stringify({ fixture, timeScale: 0 });
    const responses: http.IncomingMessage[] = [];
    const rssBefore = process.memoryUsage().rss;
    try {
      const { hostname, port } = new URL(service.url);
      for (let i = 0; i < 10; i++) {
        readingLast = true;
        const response = await new Promise<http.IncomingMessage>((resolve, reject) => {
          const request = http.request(
            {
              host: hostname,
              port,
              method: "POST",
              path: "/sandbox/replay",
              agent: false,
              headers: { "content-type": "application/json" },
            },
            resolve,
          );
          request.on("error", reject);
          request.end(body);
        });
        response.pause();
        responses.push(response);
        // The earlier replays wait at their gates and report nothing: the last report is this one's.
        await waitFor(() => !readingLast, 60_000);
      }
      const grownMiB = (process.memoryUsage().rss - rssBefore) / MiB;
      console.log(`10 replays of ${(body.length / MiB).toFixed(1)} MiB read by nobody: RSS +${grownMiB.toFixed(0)} MiB`);
      // Each replay would be about 9 MiB of SSE, held whole, before the gate; with it, the upload and its parse.
      expect(grownMiB).toBeLessThan(400);
    } finally {
      for (const response of responses) response.destroy();
      await service.close();
    }
  });
});

describe("a flood of sandbox replays", () => {
  /**
   * Each asks `Expect: 100-continue` and sends no body: a request given a
   * slot waits for its body and is answered nothing more, one refused is
   * answered 429 after the `100 Continue`, however fast the replays that
   * play would have ended. `status` is the answer's final status, once it has one.
   */
  const holdOrRefuse = (port: number) => {
    const socket = connect(port, "127.0.0.1");
    const request = { socket, status: undefined as number | undefined };
    let received = "";
    socket.on("data", (chunk) => {
      received += chunk.toString("latin1");
      const final = /HTTP\/1\.1 ([2-5]\d\d) /.exec(received);
      if (final) request.status = Number(final[1]);
    });
    socket.on("error", () => undefined);
    socket.write(
      [
        "POST /sandbox/replay HTTP/1.1",
        `Host: 127.0.0.1:${port}`,
        "Content-Type: application/json",
        "Content-Length: 100000",
        "Expect: 100-continue",
        "",
        "",
      ].join("\r\n"),
    );
    return request;
  };

  it("holds at most the cap at once, refuses the rest with 429, gives slots back, and answers the probes all through", async () => {
    const service = await startService(testConfig({ a2aUrl: "http://127.0.0.1:9/" }));
    const port = Number(new URL(service.url).port);
    const sockets: Socket[] = [];
    const replay = () =>
      fetch(`${service.url}/sandbox/replay`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          fixture:
            '{"delayMs": 0, "frame": {"task": {"id": "${taskId}", "contextId": "${contextId}", "status": {"state": "TASK_STATE_COMPLETED"}}}}',
        }),
      });
    // Once the service has seen every holder go, a replay plays again.
    const untilReplayPlays = async () => {
      let status = (await replay()).status;
      for (let tries = 0; status !== 200 && tries < 200; tries++) status = (await replay()).status;
      expect(status).toBe(200);
    };
    try {
      for (let round = 0; round < 20; round++) {
        await untilReplayPlays();
        const requests = Array.from({ length: 50 }, () => holdOrRefuse(port));
        sockets.push(...requests.map((request) => request.socket));
        // All slots were free: 4 are held, and the 46 others are refused.
        await waitFor(() => requests.filter((request) => request.status === 429).length === 46, 30_000);
        expect(requests.filter((request) => request.status === undefined)).toHaveLength(4);
        // Liveness (readiness asks a kernel, and a replay needs none: this service has none to reach).
        expect((await fetch(`${service.url}/health`)).status).toBe(200);
        for (const request of requests) request.socket.destroy();
      }
      await untilReplayPlays();
    } finally {
      for (const socket of sockets) socket.destroy();
      await service.close();
    }
  });
});

describe("questions of every size, on both stores", () => {
  let redis: RedisServer;
  const harnesses: Harness[] = [];
  const asks = (turn: ReplayTurn) => {
    const match = /^ask (\d+)$/.exec(turn.text);
    if (turn.turnIndex !== 0 || !match) return undefined;
    const count = Number(match[1]);
    const input = {
      schemaVersion: 1,
      kind: "ask_user_question",
      requestTaskId: "${taskId}",
      contextId: "${contextId}",
      inputId: "q",
      toolUseId: "toolu-q",
      toolName: "AskUserQuestion",
      prompt: "Which one?",
      required: true,
      options: Array.from({ length: count }, (_, i) => ({ id: `option-${i}`, label: `Option number ${i} of a very long list` })),
    };
    return [script.task(), script.status("INPUT_REQUIRED", { input })];
  };
  beforeAll(async () => {
    redis = await startRedisServer();
    harnesses.push(await startHarness({ script: asks }), await startHarness({ script: asks }, { redisUrl: redis.url }));
  }, 60_000);
  afterAll(async () => {
    for (const harness of harnesses) await harness.close();
    await redis?.stop();
  });

  it("end alike on the file store and on Redis, and repeat nothing past its bound", async () => {
    for (const count of [10, 100, 500, 1_000, 5_000, 10_000, 11_000, 20_000, 50_000, 60_000]) {
      const outcomes: string[] = [];
      for (const harness of harnesses) {
        const first = runInput(`ask ${count}`);
        const paused = await postRun(harness.service.url, first);
        await expectValidRun(paused.events);
        const end = lastOf(paused.events)!;
        expect(bytesOf(end)).toBeLessThan(MAX_SHOWN_INTERRUPTS_BYTES + 64 * 1024);
        outcomes.push(end.type === EventType.RUN_ERROR ? `${end.code}` : `${end.outcome?.type}`);
        if (end.type !== EventType.RUN_FINISHED) continue;
        const refused = await postRun(harness.service.url, runInput("again", { threadId: first.threadId }));
        expect(refused.status).toBe(409);
        expect(Buffer.byteLength(refused.raw)).toBeLessThan(MAX_REPEATED_INTERRUPTS_BYTES + 4 * 1024);
      }
      expect([count, outcomes[1]]).toEqual([count, outcomes[0]]);
    }
  });
});

describe("Redis stopped as run after run ends", () => {
  let redis: RedisServer;
  let harness: Harness;
  let heldContext: string | undefined;
  let atHold: () => void = () => undefined;
  let release: () => void = () => undefined;
  beforeAll(async () => {
    redis = await startRedisServer();
    harness = await startHarness(
      {
        holdLine: (turn, index, count) => {
          if (turn.contextId !== heldContext || index !== count - 1) return undefined;
          atHold();
          return new Promise<void>((resolve) => (release = resolve));
        },
      },
      { redisUrl: redis.url, leaseTtlMs: 500 },
    );
  }, 60_000);
  afterAll(async () => {
    release();
    await harness.close();
    await redis.stop();
  });

  it("never tells a run whose end was not stored as a success", async () => {
    for (let round = 0; round < 20; round++) {
      const input = runInput("chat");
      heldContext = contextIdFor(input.threadId);
      const reached = new Promise<void>((resolve) => (atHold = resolve));
      const running = postRun(harness.service.url, input);
      await reached;
      await redis.halt();
      heldContext = undefined;
      release();
      const { events } = await running;
      await redis.restart();
      await expectValidRun(events);
      // Written before the hold (task, session) or not at all: either way, no success.
      expect(lastOf(events)).toMatchObject({ type: EventType.RUN_ERROR, code: "STATE_PERSISTENCE_FAILED" });
      let next: Awaited<ReturnType<typeof postRun>> | undefined;
      for (;;) {
        next = await postRun(harness.service.url, runInput("chat", { threadId: input.threadId }));
        if (next.status === 200) break;
        expect(["THREAD_BUSY", "STATE_UNAVAILABLE"]).toContain((next.json as { error: { code: string } }).error.code);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await expectValidRun(next.events);
      expect(lastOf(next.events)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });
    }
  });
});
