import { afterEach, describe, expect, it, jest } from "@jest/globals";
import type { Task } from "a2a-sdk-v03";
import type { ReplayTurn } from "../../../lib/kernel/replay-executor.js";
import { artifactText, collect, gate, getTask, kernelsClosedAfterEach, taskIdOf, userMessage, type StreamEvent } from "./a2a-v03.js";

const start = kernelsClosedAfterEach();
afterEach(() => {
  jest.restoreAllMocks();
});

const ids = (events: readonly StreamEvent[]) => ({
  taskId: taskIdOf(events),
  contextId: events[0]?.kind === "task" ? events[0].contextId : "",
});

/** Holds the line of the first turn that plays `lineIndex` until `opened` settles. */
const holdFirstTurn = (lineIndex: number, opened: Promise<void>) => (turn: ReplayTurn, index: number) =>
  turn.turnIndex === 0 && index === lineIndex ? opened : undefined;

describe("the A2A 0.3 kernel's tasks", () => {
  it("asks for input, parks the task, and plays the answer sent to the same task as its next turn", async () => {
    const { kernel, client } = await start();
    const asked = await collect(client.sendMessageStream(userMessage("ask-input")));
    expect(asked.events.at(-1)).toMatchObject({
      kind: "status-update",
      final: true,
      status: {
        state: "input-required",
        message: { role: "agent", parts: [{ kind: "text", text: "Which colour should the button be?" }] },
      },
    });
    const task = ids(asked.events);
    expect((await getTask(client, task.taskId)).status.state).toBe("input-required");

    const answered = await collect(client.sendMessageStream(userMessage("blue", task)));
    // A later turn goes on from the stored task: no task frame of its own.
    expect(answered.events.map((event) => event.kind)).toEqual(["status-update", "artifact-update", "status-update"]);
    expect(answered.events.every((event) => event.kind !== "task" && event.taskId === task.taskId)).toBe(true);
    expect(answered.events.at(-1)).toMatchObject({ status: { state: "completed" }, final: true });
    const done = await getTask(client, task.taskId, 10);
    expect(artifactText(done)).toBe("The button will be painted the colour you chose.");
    expect(done.history?.map((message) => message.role)).toEqual(["user", "agent", "user", "agent"]);
    expect(kernel.received.map((call) => call.method)).toEqual(["message/stream", "tasks/get", "message/stream", "tasks/get"]);
    expect(kernel.received[2]!.params).toMatchObject({ message: { taskId: task.taskId, parts: [{ kind: "text", text: "blue" }] } });
  });

  it("asks to sign in with auth-required, and completes on the next message to the task", async () => {
    const { client } = await start();
    const asked = await collect(client.sendMessageStream(userMessage("auth-required")));
    expect(asked.events.at(-1)).toMatchObject({
      kind: "status-update",
      final: true,
      status: { state: "auth-required", message: { parts: [{ kind: "text", text: expect.stringContaining("sign in") }] } },
    });
    const task = ids(asked.events);
    const answered = await collect(client.sendMessageStream(userMessage("done", task)));
    expect(answered.events.at(-1)).toMatchObject({
      status: { state: "completed", message: { parts: [{ kind: "text", text: expect.stringContaining("signed in") }] } },
      final: true,
    });
  });

  it("answers message-reply with one message and no task, as the SDK's hello-world agent does", async () => {
    const { kernel, client } = await start();
    const { events, error } = await collect(client.sendMessageStream(userMessage("message-reply", { contextId: "ctx-hello" })));
    expect(error).toBeUndefined();
    expect(events).toEqual([
      {
        kind: "message",
        messageId: "ctx-hello-reply",
        role: "agent",
        parts: [{ kind: "text", text: expect.stringContaining("one A2A message") }],
        contextId: "ctx-hello",
      },
    ]);
    expect(kernel.received.map((call) => call.method)).toEqual(["message/stream"]);
  });

  it("cancels a running task: its stream ends canceled (final) and tasks/get says canceled", async () => {
    const held = gate();
    const { client } = await start({ holdLine: holdFirstTurn(5, held.opened) });
    try {
      const stream = client.sendMessageStream(userMessage("slow-chat"));
      // Up to the held line: the task, its working status and three chunks; the task is running.
      const seen = await take(stream, 5);
      const taskId = taskIdOf(seen);
      const cancelled = await client.cancelTask({ id: taskId });
      expect("result" in cancelled && cancelled.result.status.state).toBe("canceled");
      const rest = await collect(stream);
      expect(rest.events).toEqual([
        expect.objectContaining({ kind: "status-update", taskId, status: expect.objectContaining({ state: "canceled" }), final: true }),
      ]);
      const task = await getTask(client, taskId);
      expect(task.status.state).toBe("canceled");
      // The replay stopped where it was cancelled.
      expect(artifactText(task)).toBe("This answer takes ");
    } finally {
      held.open();
    }
  });

  it("cancels a task parked in input-required, which then takes no answer", async () => {
    const { client } = await start();
    const asked = await collect(client.sendMessageStream(userMessage("ask-input")));
    const task = ids(asked.events);
    const cancelled = await client.cancelTask({ id: task.taskId });
    expect("result" in cancelled && cancelled.result.status.state).toBe("canceled");
    expect((await getTask(client, task.taskId)).status.state).toBe("canceled");
    await expect(client.sendMessage(userMessage("blue", task))).rejects.toMatchObject(rpcError(-32600, "terminal state"));
    // A finished task cannot be cancelled again.
    await expect(client.cancelTask({ id: task.taskId })).rejects.toMatchObject(rpcError(-32002));
  });

  it("cuts the stream of drops mid-run, and tasks/resubscribe continues it to the end", async () => {
    const resubscribed = gate();
    // Line 5 is the first after the drop: it waits until the resubscription is in.
    const { kernel, client } = await start({ holdLine: holdFirstTurn(5, resubscribed.opened) });
    const cut = await collect(client.sendMessageStream(userMessage("drops")));
    expect(cut.error).toBeDefined();
    expect(cut.events.map((event) => event.kind)).toEqual(["task", "status-update", "artifact-update", "artifact-update"]);
    const taskId = taskIdOf(cut.events);

    const again = client.resubscribeTask({ id: taskId });
    const [stored] = await take(again, 1);
    expect(stored).toMatchObject({ kind: "task", id: taskId, status: { state: "working" } });
    expect(artifactText(stored as Task)).toBe("This answer is streamed in three parts, and the stream breaks after this one; ");
    resubscribed.open();
    const rest = await collect(again);
    expect(rest.error).toBeUndefined();
    expect(rest.events).toEqual([
      expect.objectContaining({ kind: "artifact-update", append: true, lastChunk: true }),
      expect.objectContaining({ kind: "status-update", status: expect.objectContaining({ state: "completed" }), final: true }),
    ]);
    expect(artifactText(await getTask(client, taskId))).toBe(
      "This answer is streamed in three parts, and the stream breaks after this one; the last part comes through tasks/resubscribe.",
    );
    expect(kernel.received.map((call) => call.method)).toEqual(["message/stream", "tasks/resubscribe", "tasks/get"]);
  });

  it("answers tasks/resubscribe to a finished task with the task alone", async () => {
    const { client } = await start();
    const { events } = await collect(client.sendMessageStream(userMessage("plain-chat")));
    const again = await collect(client.resubscribeTask({ id: taskIdOf(events) }));
    expect(again.events).toEqual([expect.objectContaining({ kind: "task", status: expect.objectContaining({ state: "completed" }) })]);
  });

  it("answers tasks/get, tasks/cancel and tasks/resubscribe for an unknown task with -32001", async () => {
    const { client } = await start();
    // The SDK logs each error it streams; keep the spec output readable.
    jest.spyOn(console, "error").mockImplementation(() => undefined);
    await expect(client.getTask({ id: "no-such-task" })).rejects.toMatchObject(rpcError(-32001));
    await expect(client.cancelTask({ id: "no-such-task" })).rejects.toMatchObject(rpcError(-32001));
    const resubscribed = await collect(client.resubscribeTask({ id: "no-such-task" }));
    expect(resubscribed.events).toEqual([]);
    expect(String(resubscribed.error)).toContain("-32001");
  });
});

/** What the SDK's client throws for a JSON-RPC error. */
const rpcError = (code: number, message = "") => ({ errorResponse: { error: { code, message: expect.stringContaining(message) } } });

/** The next `count` events of a stream, leaving it open. */
async function take(stream: AsyncGenerator<StreamEvent>, count: number): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  while (events.length < count) {
    const next = await stream.next();
    if (next.done) throw new Error(`the stream ended after ${events.length} events, before ${count}`);
    events.push(next.value);
  }
  return events;
}
