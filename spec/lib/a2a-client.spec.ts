import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, jest } from "@jest/globals";
import http from "node:http";
import net from "node:net";
import { inspect } from "node:util";
import express from "express";
import { firstValueFrom, lastValueFrom, take, toArray, type Observable } from "rxjs";
import { AgentCard, StreamResponse } from "@a2a-js/sdk";
import {
  DefaultRequestHandler,
  InMemoryTaskStore,
  type AgentExecutionEvent,
  type AgentExecutor,
  type ExecutionEventBus,
} from "@a2a-js/sdk/server";
import { jsonRpcHandler, UserBuilder } from "@a2a-js/sdk/server/express";
import { A2A_ERROR_CODE } from "@a2a-js/sdk/errors";
import { A2AClient, rpcErrorOf, type JsonRpcResult } from "../../lib/a2a/client.js";
import { AguiError } from "../../lib/errors.js";
import { rejectionOf } from "../support/rejection.js";

const TOKEN = "s3cret-kernel-token";
const UUID4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

// ---------------------------------------------------------------- helpers

interface Outcome {
  frames: JsonRpcResult[];
  error?: AguiError;
  completed: boolean;
}

/** Everything a stream does until it ends, one way or the other. */
function outcomeOf(stream$: Observable<JsonRpcResult>): Promise<Outcome> {
  return new Promise((resolve) => {
    const frames: JsonRpcResult[] = [];
    stream$.subscribe({
      next: (frame) => frames.push(frame),
      error: (error: AguiError) => resolve({ frames, error, completed: false }),
      complete: () => resolve({ frames, completed: true }),
    });
  });
}

function expectNoToken(error: AguiError | undefined) {
  expect(error).toBeInstanceOf(AguiError);
  expect(`${error!.message} ${JSON.stringify(error!.params)}`).not.toContain(TOKEN);
}

const servers: http.Server[] = [];

async function listen(server: http.Server | net.Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/`;
}

async function closeServer(server: http.Server | net.Server) {
  if (server instanceof http.Server) server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
}

/** The id of the request a hand-written server answers now: its frames carry it, as a JSON-RPC response must. */
let answeringId: unknown = null;

/** A loopback server for the shapes the SDK will not produce; it counts requests. The handler gets the whole body. */
async function plainServer(handler: (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void) {
  let requests = 0;
  const server = http.createServer((req, res) => {
    requests++;
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      try {
        answeringId = (JSON.parse(body) as { id?: unknown }).id ?? null;
      } catch {
        answeringId = null;
      }
      handler(req, res, body);
    });
  });
  servers.push(server);
  return { url: await listen(server), requests: () => requests };
}

function startSse(res: http.ServerResponse) {
  res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache" });
}

const frame = (result: object) => `data: ${JSON.stringify({ jsonrpc: "2.0", id: answeringId, result })}\n\n`;

/** A port with nothing listening on it. */
async function deadUrl(): Promise<string> {
  const server = net.createServer();
  const url = await listen(server);
  await closeServer(server);
  return url;
}

/**
 * A reconnect or a leftover limit would be a setTimeout; with fake timers, "no
 * reconnect is scheduled" (or "no timer is left") is a timer count, not a wait.
 */
function fakeTimersOnly() {
  jest.useFakeTimers({
    doNotFake: ["nextTick", "setImmediate", "clearImmediate", "queueMicrotask", "hrtime", "performance", "Date"],
  });
}

/** Lets every pending promise callback run (one macrotask turn; no timer involved). */
const settled = () => new Promise((resolve) => setImmediate(resolve));

afterEach(async () => {
  jest.useRealTimers();
  await Promise.all(servers.splice(0).map(closeServer));
});

// ---------------------------------------------------------------- a real A2A 1.0 kernel on @a2a-js/sdk

function publish(bus: ExecutionEventBus, wire: object) {
  const { payload } = StreamResponse.fromJSON(wire);
  bus.publish({ kind: payload!.$case, data: payload!.value } as AgentExecutionEvent);
}

/** "hello" runs to completion; "ask" parks the task in input-required. */
class TinyExecutor implements AgentExecutor {
  readonly #contexts = new Map<string, string>();

  execute = async (ctx: Parameters<AgentExecutor["execute"]>[0], bus: ExecutionEventBus) => {
    const ids = { taskId: ctx.taskId, contextId: ctx.contextId };
    this.#contexts.set(ctx.taskId, ctx.contextId);
    const content = ctx.userMessage.parts[0]?.content;
    const text = content?.$case === "text" ? content.value : "";
    publish(bus, { task: { id: ctx.taskId, contextId: ctx.contextId, status: { state: "TASK_STATE_SUBMITTED" } } });
    if (text === "ask") {
      publish(bus, { statusUpdate: { ...ids, status: { state: "TASK_STATE_INPUT_REQUIRED" } } });
    } else {
      const message = { messageId: `${ctx.taskId}-message`, role: "ROLE_AGENT", parts: [{ text: "hi" }] };
      publish(bus, { statusUpdate: { ...ids, status: { state: "TASK_STATE_WORKING", message } } });
      publish(bus, { artifactUpdate: { ...ids, artifact: { artifactId: "a1", parts: [{ text: "result" }] } } });
      publish(bus, { statusUpdate: { ...ids, status: { state: "TASK_STATE_COMPLETED" } } });
    }
    bus.finished();
  };

  // Nothing ever runs between turns here, so a cancel is answered at once:
  // DefaultRequestHandler.cancelTask waits for this terminal event.
  cancelTask = async (taskId: string, bus: ExecutionEventBus) => {
    const contextId = this.#contexts.get(taskId);
    publish(bus, { statusUpdate: { taskId, contextId, status: { state: "TASK_STATE_CANCELED" } } });
    bus.finished();
  };
}

function userMessage(text: string, taskId?: string) {
  return {
    message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text }], contextId: "agui-test", taskId },
    configuration: { acceptedOutputModes: ["text/plain"] },
  };
}

const stateOf = (frame: JsonRpcResult | undefined): unknown => {
  const payload = (frame?.task ?? frame?.statusUpdate ?? frame) as { status?: { state?: string } } | undefined;
  return payload?.status?.state;
};

describe("A2AClient against an @a2a-js/sdk kernel", () => {
  let kernel: http.Server;
  let client: A2AClient;
  let requests: http.IncomingHttpHeaders[] = [];

  beforeAll(async () => {
    // The SDK logs every error it answers; the tests assert those answers instead.
    jest.spyOn(console, "error").mockImplementation(() => undefined);
    const card = AgentCard.fromJSON({
      name: "tiny",
      description: "test kernel",
      version: "1",
      supportedInterfaces: [{ url: "http://127.0.0.1/", protocolBinding: "JSONRPC", protocolVersion: "1.0" }],
      capabilities: { streaming: true },
      defaultInputModes: ["text/plain"],
      defaultOutputModes: ["text/plain"],
      skills: [],
    });
    const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), new TinyExecutor());
    const app = express();
    app.use((req, _res, next) => {
      if (req.method === "POST") requests.push(req.headers);
      next();
    });
    app.get("/iac-code/pipeline/state", (req, res) => {
      if (req.query.taskId !== "t-pipeline") return void res.status(404).json({ error: "unknown task" });
      res.json({ taskId: req.query.taskId, afterSequence: Number(req.query.afterSequence), events: [{ sequence: 4.0 }] });
    });
    app.use(jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
    kernel = http.createServer(app);
    client = new A2AClient({ url: await listen(kernel), token: TOKEN });
  });

  beforeEach(() => {
    requests = [];
  });

  afterAll(async () => {
    jest.restoreAllMocks();
    await closeServer(kernel);
  });

  it("streams the frames in order and completes after the terminal status, with a single POST", async () => {
    const { frames, completed } = await outcomeOf(client.sendStreamingMessage(userMessage("hello")));

    expect(completed).toBe(true);
    expect(frames.map((f) => Object.keys(f))).toEqual([["task"], ["statusUpdate"], ["artifactUpdate"], ["statusUpdate"]]);
    expect(frames.map(stateOf)).toEqual(["TASK_STATE_SUBMITTED", "TASK_STATE_WORKING", undefined, "TASK_STATE_COMPLETED"]);
    // One more round trip to the kernel, so a stray re-POST would have been counted before it.
    await client.getTask((frames[0]!.task as { id: string }).id);
    expect(requests).toHaveLength(2);
  });

  it("sends A2A-Version 1.0, a JSON body, the right Accept and the bearer token", async () => {
    const frames = await lastValueFrom(client.sendStreamingMessage(userMessage("hello")).pipe(toArray()));
    await client.getTask((frames[0]!.task as { id: string }).id);

    const [stream, unary] = requests;
    for (const headers of [stream, unary]) {
      expect(headers).toMatchObject({ "a2a-version": "1.0", "content-type": "application/json", authorization: `Bearer ${TOKEN}` });
    }
    expect(stream!.accept).toBe("text/event-stream");
    expect(unary!.accept).toBe("application/json");
  });

  it("getTask returns the bare Task", async () => {
    const frames = await lastValueFrom(client.sendStreamingMessage(userMessage("hello")).pipe(toArray()));
    const taskId = (frames[0]!.task as { id: string }).id;

    const task = await client.getTask(taskId);

    expect(task.id).toBe(taskId);
    expect(stateOf(task)).toBe("TASK_STATE_COMPLETED");
    expect(task.history).toEqual(expect.any(Array));
  });

  it("parks at input-required; subscribeToTask starts with its Task snapshot; cancelTask cancels it", async () => {
    const frames = await lastValueFrom(client.sendStreamingMessage(userMessage("ask")).pipe(toArray()));
    const taskId = (frames[0]!.task as { id: string }).id;
    expect(stateOf(frames.at(-1))).toBe("TASK_STATE_INPUT_REQUIRED");

    const snapshot = await firstValueFrom(client.subscribeToTask(taskId));
    expect(Object.keys(snapshot)).toEqual(["task"]);
    expect(stateOf(snapshot)).toBe("TASK_STATE_INPUT_REQUIRED");

    const canceled = await client.cancelTask(taskId);
    expect(canceled.id).toBe(taskId);
    expect(stateOf(canceled)).toBe("TASK_STATE_CANCELED");
  });

  it("cancelTask of a completed task rejects with -32002 (not cancelable)", async () => {
    const frames = await lastValueFrom(client.sendStreamingMessage(userMessage("hello")).pipe(toArray()));

    const error = await rejectionOf(client.cancelTask((frames[0]!.task as { id: string }).id));

    expect(error.code).toBe("A2A_EXECUTION_FAILED");
    expect(rpcErrorOf(error)?.code).toBe(A2A_ERROR_CODE.TASK_NOT_CANCELABLE);
  });

  it("an unknown taskId fails before the stream: A2A_EXECUTION_FAILED with -32001, no retry", async () => {
    const { frames, error } = await outcomeOf(client.sendStreamingMessage(userMessage("hello", "no-such-task")));

    expect(frames).toEqual([]);
    expect(error?.code).toBe("A2A_EXECUTION_FAILED");
    expect(error?.params).toMatchObject({ rpcCode: -32001 });
    expect(rpcErrorOf(error!)).toMatchObject({
      code: A2A_ERROR_CODE.TASK_NOT_FOUND,
      data: [expect.objectContaining({ reason: "TASK_NOT_FOUND" })],
    });
    expectNoToken(error);
    expect(requests).toHaveLength(1);
  });

  it("getTask of an unknown task rejects with -32001", async () => {
    const error = await rejectionOf(client.getTask("no-such-task"));
    expect(error.code).toBe("A2A_EXECUTION_FAILED");
    expect(rpcErrorOf(error)?.code).toBe(-32001);
  });

  it("getPipelineState returns the parsed JSON, and undefined on 404", async () => {
    await expect(client.getPipelineState("t-pipeline", 3)).resolves.toEqual({
      taskId: "t-pipeline",
      afterSequence: 3,
      events: [{ sequence: 4 }],
    });
    await expect(client.getPipelineState("unknown", 0)).resolves.toBeUndefined();
  });

  it("never shows the token when the client is inspected", () => {
    expect(inspect(client, { showHidden: true, depth: 5 })).not.toContain(TOKEN);
  });
});

// ---------------------------------------------------------------- shapes the SDK does not produce

describe("A2AClient against hand-written servers", () => {
  it("turns a mid-stream `event: error` record into A2A_EXECUTION_FAILED after the frames before it", async () => {
    const server = await plainServer((_req, res) => {
      startSse(res);
      res.write(frame({ task: { id: "t1", status: { state: "TASK_STATE_WORKING" } } }));
      const rpcError = { code: -32603, message: "kernel crashed", data: [{ reason: "INTERNAL_ERROR" }] };
      res.end(`event: error\ndata: ${JSON.stringify({ jsonrpc: "2.0", id: "1", error: rpcError })}\n\n`);
    });

    const { frames, error } = await outcomeOf(new A2AClient({ url: server.url, token: TOKEN }).sendStreamingMessage({}));

    expect(frames).toHaveLength(1);
    expect(error?.code).toBe("A2A_EXECUTION_FAILED");
    expect(error?.params).toEqual({ rpcCode: -32603, detail: "kernel crashed" });
    expect(rpcErrorOf(error!)?.code).toBe(-32603);
    expectNoToken(error);
  });

  it("raises SESSION_BACKUP_NOT_READY when error.data says so", async () => {
    const data = { code: "SESSION_BACKUP_NOT_READY", retryable: true };
    const server = await plainServer((_req, res) => {
      startSse(res);
      res.end(`event: error\ndata: ${JSON.stringify({ jsonrpc: "2.0", id: "1", error: { code: -32603, message: "syncing", data } })}\n\n`);
    });

    const { error } = await outcomeOf(new A2AClient({ url: server.url }).sendStreamingMessage({}));

    expect(error?.code).toBe("SESSION_BACKUP_NOT_READY");
    expect(rpcErrorOf(error!)?.data).toEqual(data);
  });

  it("reads a plain JSON-RPC error answered with HTTP 200 to a unary call", async () => {
    const server = await plainServer((_req, res) => {
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ jsonrpc: "2.0", id: "1", error: { code: -32002, message: "Task cannot be canceled" } }));
    });

    const error = await rejectionOf(new A2AClient({ url: server.url }).cancelTask("t1"));

    expect(error.code).toBe("A2A_EXECUTION_FAILED");
    expect(rpcErrorOf(error)).toEqual({ code: -32002, message: "Task cannot be canceled" });
  });

  it("a `data:` that is not JSON is A2A_PROTOCOL_ERROR", async () => {
    const server = await plainServer((_req, res) => {
      startSse(res);
      res.write(frame({ task: { id: "t1" } }));
      res.write("data: {not json\n\n");
      // Left open: the client must stop on its own and hang up.
    });

    const { frames, error } = await outcomeOf(new A2AClient({ url: server.url }).sendStreamingMessage({}));

    expect(frames).toHaveLength(1);
    expect(error?.code).toBe("A2A_PROTOCOL_ERROR");
  });

  it("a frame with neither result nor error is A2A_PROTOCOL_ERROR, and so is a unary answer that is not JSON", async () => {
    const server = await plainServer((req, res) => {
      if (req.headers.accept === "text/event-stream") {
        startSse(res);
        res.end(`data: ${JSON.stringify({ jsonrpc: "2.0", id: answeringId })}\n\n`);
      } else {
        res.writeHead(200, { "Content-Type": "application/json" });
        res.end("<html>");
      }
    });
    const client = new A2AClient({ url: server.url });

    expect((await outcomeOf(client.sendStreamingMessage({}))).error?.code).toBe("A2A_PROTOCOL_ERROR");
    expect((await rejectionOf(client.getTask("t1"))).code).toBe("A2A_PROTOCOL_ERROR");
  });

  it("HTTP 500 is A2A_UNAVAILABLE, keeping the JSON-RPC error the body carried", async () => {
    const server = await plainServer((_req, res) => {
      res.writeHead(500, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ jsonrpc: "2.0", id: "1", error: { code: -32603, message: "boom" } }));
    });
    const client = new A2AClient({ url: server.url, token: TOKEN });

    const { error } = await outcomeOf(client.sendStreamingMessage({}));
    expect(error?.code).toBe("A2A_UNAVAILABLE");
    expect(error?.params).toEqual({ httpStatus: 500, rpcCode: -32603, detail: "boom" });
    expectNoToken(error);

    const unary = await rejectionOf(client.sendMessage({}));
    expect(unary.code).toBe("A2A_UNAVAILABLE");
    expect(server.requests()).toBe(2);
  });

  it("HTTP 502 with an HTML body is A2A_UNAVAILABLE", async () => {
    const server = await plainServer((_req, res) => {
      res.writeHead(502, { "Content-Type": "text/html" });
      res.end("<h1>bad gateway</h1>");
    });

    const { error } = await outcomeOf(new A2AClient({ url: server.url }).sendStreamingMessage({}));

    expect(error?.code).toBe("A2A_UNAVAILABLE");
    expect(error?.params).toEqual({ httpStatus: 502 });
  });

  it("a connection destroyed mid-stream errors with A2A_UNAVAILABLE after the frames it delivered", async () => {
    const server = await plainServer((req, res) => {
      startSse(res);
      res.write(frame({ statusUpdate: { taskId: "t1", status: { state: "TASK_STATE_WORKING" } } }), () => req.socket.destroy());
    });

    const { frames, error } = await outcomeOf(new A2AClient({ url: server.url }).sendStreamingMessage({}));

    expect(frames).toHaveLength(1);
    expect(error?.code).toBe("A2A_UNAVAILABLE");
    expect(server.requests()).toBe(1);
  });

  it("a stream the server ends is not POSTed again, even when it asked for `retry: 1`", async () => {
    const server = await plainServer((_req, res) => {
      startSse(res);
      res.end(`retry: 1\n\n${frame({ statusUpdate: { taskId: "t1", status: { state: "TASK_STATE_COMPLETED" } } })}`);
    });
    fakeTimersOnly();

    const { frames, completed } = await outcomeOf(new A2AClient({ url: server.url }).sendStreamingMessage({}));

    expect(completed).toBe(true);
    expect(frames).toHaveLength(1);
    await settled();
    expect(jest.getTimerCount()).toBe(0);
    expect(server.requests()).toBe(1);
  });

  it("a port with nothing listening fails promptly with A2A_UNAVAILABLE, streaming or not", async () => {
    const client = new A2AClient({ url: await deadUrl(), token: TOKEN });
    fakeTimersOnly();
    const started = performance.now();

    const { error } = await outcomeOf(client.sendStreamingMessage({}));

    expect(error?.code).toBe("A2A_UNAVAILABLE");
    expect((error?.cause as { code?: string }).code).toBe("ECONNREFUSED");
    expect(performance.now() - started).toBeLessThan(1000);
    await settled();
    expect(jest.getTimerCount()).toBe(0); // no reconnect waiting to fire
    expectNoToken(error);

    jest.useRealTimers();
    const unary = await rejectionOf(client.getTask("t1"));
    expect(unary.code).toBe("A2A_UNAVAILABLE");
  });

  it("a connection reset before any answer is A2A_UNAVAILABLE, and the POST is not retried", async () => {
    let connections = 0;
    const server = net.createServer((socket) => {
      connections++;
      socket.destroy();
    });
    const url = await listen(server);
    fakeTimersOnly();

    try {
      const { error } = await outcomeOf(new A2AClient({ url }).sendStreamingMessage({}));

      expect(error?.code).toBe("A2A_UNAVAILABLE");
      await settled();
      expect(jest.getTimerCount()).toBe(0);
      expect(connections).toBe(1);
    } finally {
      jest.useRealTimers();
      await closeServer(server);
    }
  });

  it("a kernel that never answers times out with A2A_UNAVAILABLE", async () => {
    const server = await plainServer(() => {
      // Never answers; afterEach closes the connection.
    });
    const client = new A2AClient({ url: server.url, requestTimeoutMs: 100 });

    expect((await outcomeOf(client.sendStreamingMessage({}))).error?.code).toBe("A2A_UNAVAILABLE");
    expect((await rejectionOf(client.getTask("t1"))).code).toBe("A2A_UNAVAILABLE");
  });

  it("the connect timeout does not cut a stream that has started", async () => {
    let finish!: () => void;
    const finished = new Promise<void>((resolve) => (finish = resolve));
    const server = await plainServer((_req, res) => {
      startSse(res);
      res.write(frame({ task: { id: "t1" } }));
      void finished.then(() => res.end(frame({ statusUpdate: { taskId: "t1" } })));
    });
    fakeTimersOnly();
    const frames: JsonRpcResult[] = [];
    let firstFrame!: () => void;
    const started = new Promise<void>((resolve) => (firstFrame = resolve));
    const ended = new Promise<string>((resolve) =>
      new A2AClient({ url: server.url, requestTimeoutMs: 50 }).sendStreamingMessage({}).subscribe({
        next: (f) => (frames.push(f), firstFrame()),
        error: (e: AguiError) => resolve(e.code),
        complete: () => resolve("complete"),
      }),
    );

    await started;
    jest.advanceTimersByTime(60_000);
    finish();

    expect(await ended).toBe("complete");
    expect(frames).toHaveLength(2);
  });

  it("unsubscribing mid-stream closes the connection to the server", async () => {
    let serverSawClose!: () => void;
    const closed = new Promise<void>((resolve) => (serverSawClose = resolve));
    const server = await plainServer((_req, res) => {
      startSse(res);
      res.write(frame({ task: { id: "t1", status: { state: "TASK_STATE_WORKING" } } }));
      res.on("close", () => {
        if (!res.writableEnded) serverSawClose();
      });
    });

    const first = await firstValueFrom(new A2AClient({ url: server.url }).sendStreamingMessage({}).pipe(take(1)));

    expect(first).toEqual({ task: { id: "t1", status: { state: "TASK_STATE_WORKING" } } });
    await closed;
    expect(server.requests()).toBe(1);
  });

  it("drops a record the body ends in the middle of, after the whole ones before it, and completes", async () => {
    const server = await plainServer((_req, res) => {
      startSse(res);
      res.end(`${frame({ task: { id: "t1" } })}data: {"jsonrpc":"2.0","result":{"statusUpd`);
    });

    const { frames, completed } = await outcomeOf(new A2AClient({ url: server.url }).sendStreamingMessage({}));

    expect(frames).toEqual([{ task: { id: "t1" } }]);
    expect(completed).toBe(true);
  });

  it("unsubscribing before the answer has started closes the connection and leaves no timer behind", async () => {
    let requestArrived!: () => void;
    const arrived = new Promise<void>((resolve) => (requestArrived = resolve));
    let serverSawClose!: () => void;
    const closed = new Promise<void>((resolve) => (serverSawClose = resolve));
    const server = await plainServer((req) => {
      req.socket.once("close", () => serverSawClose());
      requestArrived();
    });
    fakeTimersOnly();
    const subscription = new A2AClient({ url: server.url }).sendStreamingMessage({}).subscribe();

    await arrived;
    expect(jest.getTimerCount()).toBe(1); // the first-byte limit
    subscription.unsubscribe();

    await closed;
    expect(jest.getTimerCount()).toBe(0);
    expect(server.requests()).toBe(1);
  });

  it("is cold: each subscription is its own POST with its own request id", async () => {
    const ids: string[] = [];
    const server = await plainServer((_req, res, body) => {
      const envelope = JSON.parse(body) as { jsonrpc: string; id: string; method: string; params: unknown };
      expect(envelope).toEqual({ jsonrpc: "2.0", id: expect.stringMatching(UUID4), method: "SubscribeToTask", params: { id: "t1" } });
      ids.push(envelope.id);
      startSse(res);
      res.end(frame({ task: { id: "t1" } }));
    });
    const stream$ = new A2AClient({ url: server.url }).subscribeToTask("t1");

    await lastValueFrom(stream$);
    await lastValueFrom(stream$);

    expect(server.requests()).toBe(2);
    expect(new Set(ids).size).toBe(2);
  });
});
