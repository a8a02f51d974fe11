/**
 * The A2A client in front of a real A2A 0.3 agent (`@a2a-js/sdk` 0.3, the
 * `a2a-sdk-v03` alias): every call goes out in 0.3's words and comes back
 * in 1.0's shapes, the ones the same calls give against a 1.0 kernel
 * (compare `a2a-client.spec.ts`).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it, jest } from "@jest/globals";
import { randomUUID } from "node:crypto";
import http from "node:http";
import type net from "node:net";
import express from "express";
import { firstValueFrom, lastValueFrom, toArray } from "rxjs";
import type { AgentCard, Message, TaskStatusUpdateEvent } from "a2a-sdk-v03";
import {
  DefaultRequestHandler,
  InMemoryTaskStore,
  type AgentExecutor,
  type ExecutionEventBus,
  type RequestContext,
} from "a2a-sdk-v03/server";
import { agentCardHandler, jsonRpcHandler, UserBuilder } from "a2a-sdk-v03/server/express";
import { A2AClient, rpcErrorOf, type JsonRpcResult } from "../../lib/a2a/client.js";
import { AgentCardSource } from "../../lib/a2a/dialect.js";
import { rejectionOf } from "../support/rejection.js";

const CARD: AgentCard = {
  name: "tiny-v03",
  description: "an A2A 0.3 agent without iac-code metadata",
  version: "0.3.7",
  protocolVersion: "0.3.0",
  url: "http://127.0.0.1/",
  capabilities: { streaming: true },
  defaultInputModes: ["text/plain"],
  defaultOutputModes: ["text/plain"],
  skills: [],
};

const agentMessage = (taskId: string, contextId: string, text: string): Message => ({
  kind: "message",
  messageId: randomUUID(),
  role: "agent",
  parts: [{ kind: "text", text }],
  taskId,
  contextId,
});

/** "hello" answers and completes; "ask" parks the task in input-required; the answer to it completes it. */
class TinyV03Agent implements AgentExecutor {
  readonly received: Message[] = [];

  execute = async ({ userMessage, taskId, contextId, task }: RequestContext, bus: ExecutionEventBus) => {
    this.received.push(userMessage);
    const status = (state: TaskStatusUpdateEvent["status"]["state"], text?: string, final = false): TaskStatusUpdateEvent => ({
      kind: "status-update",
      taskId,
      contextId,
      final,
      status: { state, ...(text === undefined ? {} : { message: agentMessage(taskId, contextId, text) }) },
    });
    const first = userMessage.parts[0];
    const text = first?.kind === "text" ? first.text : "";
    if (task === undefined) bus.publish({ kind: "task", id: taskId, contextId, status: { state: "submitted" } });
    if (task === undefined && text === "ask") {
      bus.publish(status("input-required", "What is your name?", true));
    } else {
      bus.publish(status("working", "Hello, "));
      bus.publish({
        kind: "artifact-update",
        taskId,
        contextId,
        artifact: {
          artifactId: "a1",
          parts: [
            { kind: "text", text: "result" },
            { kind: "data", data: { rows: 2 } },
          ],
        },
      });
      bus.publish(status("completed", undefined, true));
    }
    bus.finished();
  };

  // Nothing runs between turns, so a cancel is answered here: DefaultRequestHandler.cancelTask waits for it.
  cancelTask = async (taskId: string, bus: ExecutionEventBus) => {
    bus.publish({ kind: "status-update", taskId, contextId: "", final: true, status: { state: "canceled" } });
    bus.finished();
  };
}

const userMessage = (text: string, taskId?: string) => ({
  message: { messageId: randomUUID(), role: "ROLE_USER", parts: [{ text }], contextId: "agui-v03-test", ...(taskId ? { taskId } : {}) },
  configuration: { acceptedOutputModes: ["text/plain"] },
});

const stateOf = (frame: JsonRpcResult | undefined): unknown =>
  ((frame?.task ?? frame?.statusUpdate ?? frame) as { status?: { state?: string } } | undefined)?.status?.state;

describe("A2AClient in front of an A2A 0.3 agent on @a2a-js/sdk 0.3", () => {
  let server: http.Server;
  let url: string;
  let agent: TinyV03Agent;
  let client: A2AClient;
  let requests: Array<{ headers: http.IncomingHttpHeaders; method: string }> = [];

  beforeAll(async () => {
    // The SDK logs every error it answers; the tests assert those answers instead.
    jest.spyOn(console, "error").mockImplementation(() => undefined);
    jest.spyOn(console, "warn").mockImplementation(() => undefined);
    agent = new TinyV03Agent();
    const handler = new DefaultRequestHandler(CARD, new InMemoryTaskStore(), agent);
    const app = express();
    app.use(express.json());
    app.use((req, _res, next) => {
      if (req.method === "POST") requests.push({ headers: req.headers, method: String((req.body as { method?: unknown }).method) });
      next();
    });
    app.use("/.well-known/agent-card.json", agentCardHandler({ agentCardProvider: handler }));
    app.use(jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
    server = http.createServer(app);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/`;
    client = new A2AClient({ url, dialect: new AgentCardSource({ kernelUrl: url }) });
  });

  beforeEach(() => {
    requests = [];
  });

  afterAll(async () => {
    jest.restoreAllMocks();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it("reads the dialect from the agent card and streams in 0.3's words, frames coming back in 1.0's shapes", async () => {
    const frames = await lastValueFrom(client.sendStreamingMessage(userMessage("hello")).pipe(toArray()));

    expect(requests.map((request) => request.method)).toEqual(["message/stream"]);
    // 0.3 has no version header; a 1.0 header would tell nothing to a 0.3 agent.
    expect(requests[0]!.headers["a2a-version"]).toBeUndefined();
    expect(frames.map((frame) => Object.keys(frame))).toEqual([["task"], ["statusUpdate"], ["artifactUpdate"], ["statusUpdate"]]);
    expect(frames.map(stateOf)).toEqual(["TASK_STATE_SUBMITTED", "TASK_STATE_WORKING", undefined, "TASK_STATE_COMPLETED"]);
    const working = frames[1]!.statusUpdate as { status: { message: unknown }; final?: unknown };
    expect(working.final).toBeUndefined();
    expect(working.status.message).toMatchObject({ role: "ROLE_AGENT", parts: [{ text: "Hello, " }] });
    expect(frames[2]!.artifactUpdate).toMatchObject({
      artifact: { artifactId: "a1", parts: [{ text: "result" }, { data: { rows: 2 }, mediaType: "application/json" }] },
    });
    // The agent got a 0.3 message: kind, lowercase role and kinded parts.
    expect(agent.received.at(-1)).toMatchObject({ kind: "message", role: "user", parts: [{ kind: "text", text: "hello" }] });
  });

  it("getTask (tasks/get) answers the bare Task with 1.0 states, roles and parts", async () => {
    const frames = await lastValueFrom(client.sendStreamingMessage(userMessage("hello")).pipe(toArray()));
    const taskId = (frames[0]!.task as { id: string }).id;

    const task = await client.getTask(taskId);

    expect(requests.at(-1)!.method).toBe("tasks/get");
    expect(task).toMatchObject({ id: taskId, status: { state: "TASK_STATE_COMPLETED" } });
    expect(task.kind).toBeUndefined();
    expect(task.history).toEqual(expect.arrayContaining([expect.objectContaining({ role: "ROLE_USER", parts: [{ text: "hello" }] })]));
  });

  it("a parked task: tasks/resubscribe opens with its snapshot, the answer goes to the same task, tasks/cancel cancels another", async () => {
    const asked = await lastValueFrom(client.sendStreamingMessage(userMessage("ask")).pipe(toArray()));
    const taskId = (asked[0]!.task as { id: string }).id;
    expect(stateOf(asked.at(-1))).toBe("TASK_STATE_INPUT_REQUIRED");

    const snapshot = await firstValueFrom(client.subscribeToTask(taskId));
    expect(requests.at(-1)!.method).toBe("tasks/resubscribe");
    expect(stateOf(snapshot)).toBe("TASK_STATE_INPUT_REQUIRED");

    const answered = await lastValueFrom(client.sendStreamingMessage(userMessage("Ada", taskId)).pipe(toArray()));
    expect(agent.received.at(-1)).toMatchObject({ taskId, parts: [{ kind: "text", text: "Ada" }] });
    expect(stateOf(answered.at(-1))).toBe("TASK_STATE_COMPLETED");

    const other = await lastValueFrom(client.sendStreamingMessage(userMessage("ask")).pipe(toArray()));
    const otherId = (other[0]!.task as { id: string }).id;
    const canceled = await client.cancelTask(otherId);
    expect(requests.at(-1)!.method).toBe("tasks/cancel");
    expect(canceled).toMatchObject({ id: otherId, status: { state: "TASK_STATE_CANCELED" } });
  });

  it("0.3's error codes come through as 1.0's do: -32001 for an unknown task, -32002 for a finished one", async () => {
    const unknown = await rejectionOf(client.getTask("no-such-task"));
    expect(unknown.code).toBe("A2A_EXECUTION_FAILED");
    expect(rpcErrorOf(unknown)?.code).toBe(-32001);

    const frames = await lastValueFrom(client.sendStreamingMessage(userMessage("hello")).pipe(toArray()));
    const finished = await rejectionOf(client.cancelTask((frames[0]!.task as { id: string }).id));
    expect(finished.code).toBe("A2A_EXECUTION_FAILED");
    expect(rpcErrorOf(finished)?.code).toBe(-32002);

    const resubscribe = await rejectionOf(firstValueFrom(client.subscribeToTask("no-such-task")));
    expect(rpcErrorOf(resubscribe)?.code).toBe(-32001);
  });

  it("sendMessage (message/send) answers under the key that names the result; listTasks asks nothing of a 0.3 agent", async () => {
    const answer = await client.sendMessage(userMessage("hello"));
    expect(requests.at(-1)!.method).toBe("message/send");
    expect(Object.keys(answer)).toEqual(["task"]);
    expect(stateOf(answer)).toBe("TASK_STATE_COMPLETED");

    const before = requests.length;
    expect(await client.listTasks("agui-v03-test")).toEqual({ tasks: [] });
    expect(requests).toHaveLength(before);
  });

  it("streams in a dialect its source has settled without asking for it again", async () => {
    const source = { dialect: jest.fn(async () => "1.0" as const), settled: jest.fn(() => "0.3" as const), forget: jest.fn() };
    const settled = new A2AClient({ url, dialect: source });
    const frames = await lastValueFrom(settled.sendStreamingMessage(userMessage("hello")).pipe(toArray()));

    expect(requests.map((request) => request.method)).toEqual(["message/stream"]);
    expect(frames.length).toBeGreaterThan(0);
    expect(source.dialect).not.toHaveBeenCalled();
  });

  it("a client pinned to 1.0 talks 1.0 to it, and the 0.3 agent refuses the method (-32601)", async () => {
    const pinned = new A2AClient({ url, dialect: "1.0" });
    const error = await rejectionOf(pinned.getTask("any"));
    expect(rpcErrorOf(error)?.code).toBe(-32601);
  });

  it("asks for the card again after the agent was out of reach (it may come back as another), not after an agent's error", async () => {
    const source = { dialect: jest.fn(async () => "0.3" as const), forget: jest.fn() };
    const answering = new A2AClient({ url, dialect: source });
    await rejectionOf(answering.getTask("no-such-task"));
    expect(source.forget).not.toHaveBeenCalled();

    const dead = http.createServer();
    await new Promise<void>((resolve) => dead.listen(0, "127.0.0.1", resolve));
    const deadUrl = `http://127.0.0.1:${(dead.address() as net.AddressInfo).port}/`;
    await new Promise((resolve) => dead.close(resolve));
    const gone = new A2AClient({ url: deadUrl, dialect: source });
    expect((await rejectionOf(gone.getTask("t"))).code).toBe("A2A_UNAVAILABLE");
    expect(source.forget).toHaveBeenCalledTimes(1);
    expect((await rejectionOf(firstValueFrom(gone.sendStreamingMessage(userMessage("hello"))))).code).toBe("A2A_UNAVAILABLE");
    expect(source.forget).toHaveBeenCalledTimes(2);
  });
});
