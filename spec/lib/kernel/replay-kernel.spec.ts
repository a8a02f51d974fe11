import { describe, expect, it, jest } from "@jest/globals";
import { mkdtemp, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { StreamResponse, type AgentCard } from "@a2a-js/sdk";
import type { FixtureLine } from "../../../lib/fixtures/fixture-format.js";
import { fillPlaceholders } from "../../../lib/fixtures/placeholders.js";
import { loadFixture } from "../../../lib/kernel/fixtures.js";
import { startReplayKernel, type ReplayTurn } from "../../../lib/kernel/replay-kernel.js";
import { FIXTURES_DIR } from "../../../lib/paths.js";
import { call, kernelsClosedAfterEach, results, rpc, sseRecords, stateOf, stream, userMessage } from "./a2a-http.js";
import type { JsonRpcReply, WireStreamResponse, WireTask } from "./a2a-wire.js";

const kernel = kernelsClosedAfterEach();

const status = (state: string, extra: Record<string, unknown> = {}): FixtureLine => ({
  delayMs: 0,
  frame: { statusUpdate: { status: { state, ...extra } } },
});
const textDelta = (text: string): FixtureLine =>
  status("TASK_STATE_WORKING", { message: { messageId: "${taskId}-message", role: "ROLE_AGENT", parts: [{ text }] } });
const textOf = (result: WireStreamResponse | undefined): string =>
  (result?.statusUpdate?.status?.message?.parts ?? []).map((p) => p.text ?? "").join("");

/** The SDK logs each JSON-RPC error it sends; keep the spec output readable. */
function quietSdkErrors() {
  return jest.spyOn(console, "error").mockImplementation(() => undefined);
}

describe("startReplayKernel", () => {
  it("serves its agent card and a JSON-RPC URL ending with '/'", async () => {
    const k = await kernel();
    expect(k.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const card = (await (await fetch(new URL(".well-known/agent-card.json", k.url))).json()) as AgentCard;
    expect(card.supportedInterfaces[0]).toMatchObject({ url: k.url, protocolBinding: "JSONRPC", protocolVersion: "1.0" });
    expect(card.capabilities!.streaming).toBe(true);
  });

  it("replays a fixture frame by frame, with the live task and context ids filled in", async () => {
    const k = await kernel();
    const out = results(await stream(k.url, "SendStreamingMessage", userMessage("chat", { contextId: "agui-ctx-1" })));
    const taskId: string = out[0]!.task!.id;
    const ids = { taskId, contextId: "agui-ctx-1" };
    const expected = (await loadFixture(FIXTURES_DIR, "chat"))[0]!.lines.map(({ frame }) => {
      const [key, payload] = Object.entries(fillPlaceholders(frame, ids) as object)[0]!;
      const bound = key === "task" ? { ...payload, id: taskId, contextId: ids.contextId } : { ...payload, ...ids };
      return StreamResponse.toJSON(StreamResponse.fromJSON({ [key]: bound }));
    });

    expect(out).toHaveLength(expected.length);
    // The SDK sends a task frame from its store, with the user message added to the history.
    expect(out[0]!.task).toMatchObject({
      ...(expected[0] as WireStreamResponse).task,
      history: [expect.objectContaining({ role: "ROLE_USER" })],
    });
    // Each status carries the time it was published, each later than the one before; otherwise the frames are the fixture's.
    const times = out.map((result) => Date.parse((result.task ?? result.statusUpdate)!.status.timestamp!));
    expect(times.every((time, index) => index === 0 || time > times[index - 1]!)).toBe(true);
    const untimed = out.map(({ statusUpdate, ...rest }) => {
      if (!statusUpdate) return rest;
      const { timestamp: _time, ...status } = statusUpdate.status;
      return { ...rest, statusUpdate: { ...statusUpdate, status } };
    });
    expect(untimed.slice(1)).toEqual(expected.slice(1));
    expect(out[1]!.statusUpdate!.metadata!.iac_code!.iacCodeSessionId).toBe("sess-agui-ctx-1");
    expect(out[2]!.statusUpdate!.status.message!.messageId).toBe(`${taskId}-message`);
    expect(stateOf(out.at(-1))).toBe("TASK_STATE_COMPLETED");
  });

  it("plays the fixture the message names, and chat for any other text", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "replay-fixtures-"));
    const fixture = (text: string) => JSON.stringify(textDelta(text)) + "\n" + JSON.stringify(status("TASK_STATE_COMPLETED"));
    await writeFile(path.join(dir, "chat.jsonl"), fixture("from chat"));
    await writeFile(path.join(dir, "alpha.jsonl"), "# comment\n\n" + fixture("from alpha"));
    const k = await kernel({ fixturesDir: dir });
    const played = async (text: string) =>
      results(await stream(k.url, "SendStreamingMessage", userMessage(text)))
        .map(textOf)
        .join("");

    expect(await played("alpha")).toBe("from alpha");
    expect(await played("fixture:alpha")).toBe("from alpha");
    expect(await played("/alpha")).toBe("from alpha");
    expect(await played("What is in my stack?")).toBe("from chat");
  });

  it("lets a script choose the lines of a turn, with the task's turn index", async () => {
    const turns: ReplayTurn[] = [];
    const k = await kernel({
      script: (turn) => {
        turns.push(turn);
        if (turn.text === "use the fixture") return undefined;
        return turn.turnIndex === 0
          ? [textDelta("need input"), status("TASK_STATE_INPUT_REQUIRED")]
          : [{ delayMs: 0, frame: { statusUpdate: { taskId: "recorded-id", status: { state: "TASK_STATE_COMPLETED" } } } }];
      },
    });
    const first = results(await stream(k.url, "SendStreamingMessage", userMessage("deploy it", { contextId: "ctx-a" })));
    const taskId = first[0]!.task!.id;
    expect(first.map(stateOf)).toEqual(["TASK_STATE_SUBMITTED", "TASK_STATE_WORKING", "TASK_STATE_INPUT_REQUIRED"]);

    const second = results(await stream(k.url, "SendStreamingMessage", userMessage("yes", { taskId, contextId: "ctx-a" })));
    // A follow-up turn starts from the stored task, still parked, as a real kernel's does.
    expect(second.map(stateOf)).toEqual(["TASK_STATE_INPUT_REQUIRED", "TASK_STATE_COMPLETED"]);
    expect(second[1]!.statusUpdate!.taskId).toBe(taskId);

    expect(turns.map((t) => [t.text, t.taskId, t.contextId, t.turnIndex])).toEqual([
      ["deploy it", taskId, "ctx-a", 0],
      ["yes", taskId, "ctx-a", 1],
    ]);
    expect(turns[0]!.message).toMatchObject({ role: "ROLE_USER", parts: [{ text: "deploy it" }] });

    const fallback = results(await stream(k.url, "SendStreamingMessage", userMessage("use the fixture")));
    expect(stateOf(fallback.at(-1))).toBe("TASK_STATE_COMPLETED");
    expect(fallback.map(textOf).join("")).toContain("iac-code-agui demo kernel");
  });

  it("keeps each turn in its task's history: the user's message, then the agent's whole text (GetTask, ListTasks)", async () => {
    const finalText = (text: string): FixtureLine => ({
      delayMs: 0,
      frame: {
        statusUpdate: {
          status: { state: "TASK_STATE_WORKING", message: { messageId: "${taskId}-message", role: "ROLE_AGENT", parts: [{ text }] } },
          metadata: { iac_code: { assistantFinal: { complete: true } } },
        },
      },
    });
    const k = await kernel({
      script: (turn) =>
        turn.text === "again"
          ? [textDelta("Again."), status("TASK_STATE_COMPLETED")]
          : turn.turnIndex === 0
            ? [textDelta("Part one, "), textDelta("part two."), status("TASK_STATE_INPUT_REQUIRED")]
            : [textDelta("Do"), textDelta("ne."), finalText("Done."), status("TASK_STATE_COMPLETED")],
    });
    const first = results(await stream(k.url, "SendStreamingMessage", userMessage("deploy it", { contextId: "ctx-h" })));
    const taskId = first[0]!.task!.id;
    await stream(k.url, "SendStreamingMessage", userMessage("yes", { taskId, contextId: "ctx-h" }));
    await stream(k.url, "SendStreamingMessage", userMessage("again", { contextId: "ctx-h" }));

    const turns = (task: WireTask) =>
      (task.history ?? []).map((message) => [message.role, message.parts.map((part) => part.text).join("")]);
    const got = (await rpc(k.url, "GetTask", { id: taskId, historyLength: 100 })).result!;
    expect(turns(got)).toEqual([
      ["ROLE_USER", "deploy it"],
      ["ROLE_AGENT", "Part one, part two."],
      ["ROLE_USER", "yes"],
      ["ROLE_AGENT", "Done."],
    ]);
    expect(turns((await rpc(k.url, "GetTask", { id: taskId, historyLength: 1 })).result!)).toEqual([["ROLE_AGENT", "Done."]]);
    const listed = (await rpc(k.url, "ListTasks", { contextId: "ctx-h", historyLength: 100 })).result!.tasks;
    expect(listed.map(turns)).toEqual([
      [
        ["ROLE_USER", "again"],
        ["ROLE_AGENT", "Again."],
      ],
      turns(got),
    ]);
  });

  it("records every JSON-RPC call with its params and headers", async () => {
    const k = await kernel();
    const params = userMessage("whole-text", { metadata: { iac_code: { cwd: "/tmp/x", preferredLanguage: "en" } } });
    await stream(k.url, "SendStreamingMessage", params, { "x-extra": "1" });
    expect(k.received).toHaveLength(1);
    expect(k.received[0]).toMatchObject({
      method: "SendStreamingMessage",
      params,
      headers: expect.objectContaining({ "a2a-version": "1.0", "x-extra": "1" }),
    });
  });

  describe("with requireToken", () => {
    it("answers 401 without the bearer token and serves the call with it", async () => {
      const k = await kernel({ requireToken: "s3cret" });
      const params = userMessage("chat");
      expect((await call(k.url, "SendStreamingMessage", params)).status).toBe(401);
      expect((await call(k.url, "SendStreamingMessage", params, { authorization: "Bearer wrong" })).status).toBe(401);

      const out = results(await stream(k.url, "SendStreamingMessage", params, { authorization: "Bearer s3cret" }));
      expect(stateOf(out.at(-1))).toBe("TASK_STATE_COMPLETED");
      expect(k.received.map((c) => c.headers.authorization)).toEqual([undefined, "Bearer wrong", "Bearer s3cret"]);
    });
  });

  describe("CancelTask", () => {
    it("stops a running replay: the task is canceled and its stream ends", async () => {
      // Real delays, so the replay is still waiting on its second line when the cancel arrives.
      const k = await kernel({
        timeScale: 1,
        script: () => [textDelta("working on it"), { ...status("TASK_STATE_COMPLETED"), delayMs: 60_000 }],
      });
      const seen: WireStreamResponse[] = [];
      let canceled: JsonRpcReply<WireTask> | undefined;
      for await (const record of sseRecords(await call(k.url, "SendStreamingMessage", userMessage("go")))) {
        seen.push(record.data.result!);
        if (textOf(record.data.result) === "working on it") {
          canceled = await rpc(k.url, "CancelTask", { id: seen[0]!.task!.id });
        }
      }
      expect(canceled!.result!.status.state).toBe("TASK_STATE_CANCELED");
      expect(seen.map(stateOf)).toEqual(["TASK_STATE_SUBMITTED", "TASK_STATE_WORKING", "TASK_STATE_CANCELED"]);
      expect((await rpc(k.url, "GetTask", { id: seen[0]!.task!.id })).result!.status.state).toBe("TASK_STATE_CANCELED");
    });

    it("cancels a task parked in input-required without hanging", async () => {
      const k = await kernel({ script: () => [status("TASK_STATE_INPUT_REQUIRED")] });
      const out = results(await stream(k.url, "SendStreamingMessage", userMessage("go")));
      const id = out[0]!.task!.id;
      expect(stateOf(out.at(-1))).toBe("TASK_STATE_INPUT_REQUIRED");

      // A subscriber of the parked task sees the cancel too.
      const subscription = stream(k.url, "SubscribeToTask", { id });
      const canceled = await rpc(k.url, "CancelTask", { id });
      expect(canceled.result).toMatchObject({ id, status: { state: "TASK_STATE_CANCELED" } });
      expect(
        results(await subscription)
          .map(stateOf)
          .at(-1),
      ).toBe("TASK_STATE_CANCELED");
      // Cancelling again is idempotent in the SDK.
      expect((await rpc(k.url, "CancelTask", { id })).result!.status.state).toBe("TASK_STATE_CANCELED");
    });

    it("refuses a task that already completed, as the SDK does", async () => {
      const k = await kernel();
      const id = results(await stream(k.url, "SendStreamingMessage", userMessage("whole-text")))[0]!.task!.id;
      const refused = await rpc(k.url, "CancelTask", { id });
      expect(refused.error!.code).toBe(-32002);
    });
  });

  describe("an error line", () => {
    it("ends the stream with an `event: error` record after the frames before it", async () => {
      const quiet = quietSdkErrors();
      const k = await kernel();
      const records = await stream(k.url, "SendStreamingMessage", userMessage("stream-error"));
      quiet.mockRestore();
      const last = records.at(-1)!;
      expect(records.slice(0, -1).every((r) => r.event === "message")).toBe(true);
      expect(
        records
          .slice(0, -1)
          .map((r) => textOf(r.data.result))
          .join(""),
      ).toBe("Checking the stack status in cn-hangzhou");
      expect(last.event).toBe("error");
      expect(last.data).toEqual({
        jsonrpc: "2.0",
        id: expect.any(String),
        error: { code: -32603, message: "Kernel stream interrupted: the model connection was reset." },
      });
    });

    it("keeps the error's data, which the SDK alone would drop", async () => {
      const quiet = quietSdkErrors();
      const data = { code: "SESSION_BACKUP_NOT_READY", retryable: true };
      const k = await kernel({ script: () => [textDelta("hi"), { delayMs: 0, error: { code: -32000, message: "backup", data } }] });
      const records = await stream(k.url, "SendStreamingMessage", userMessage("go"));
      quiet.mockRestore();
      expect(records.at(-1)).toEqual({
        event: "error",
        data: expect.objectContaining({ error: { code: -32000, message: "backup", data } }),
      });
    });

    it("as the first line refuses the call with a plain JSON-RPC error", async () => {
      const quiet = quietSdkErrors();
      const data = { code: "SESSION_BACKUP_NOT_READY", retryable: true };
      const k = await kernel({ script: () => [{ delayMs: 0, error: { code: -32000, message: "not yet", data } }] });
      const streaming = await call(k.url, "SendStreamingMessage", userMessage("go"));
      const blocking = await rpc(k.url, "SendMessage", userMessage("go"));
      quiet.mockRestore();
      expect(streaming.status).toBe(200);
      expect(streaming.headers.get("content-type")).toMatch(/^application\/json/);
      expect(((await streaming.json()) as JsonRpcReply<never>).error).toEqual({ code: -32000, message: "not yet", data });
      expect(blocking.error).toEqual({ code: -32000, message: "not yet", data });
    });
  });

  it("closes with a replay and a subscription still open", async () => {
    const k = await startReplayKernel({ script: () => [textDelta("a"), { ...status("TASK_STATE_COMPLETED"), delayMs: 60_000 }] });
    const response = await call(k.url, "SendStreamingMessage", userMessage("go"));
    const records = sseRecords(response);
    expect((await records.next()).value?.data.result.task).toBeDefined();
    await k.close();
    const rest: unknown[] = [];
    await (async () => {
      for await (const record of records) rest.push(record);
    })().catch(() => undefined);
    expect(rest.length).toBeLessThanOrEqual(1);
  });
});
