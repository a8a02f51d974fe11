/**
 * Interrupts and resumes against the real replay kernel over HTTP: turn
 * sections, the strict permission answer, sideband answers and GetTask.
 */
import { describe, expect, it, jest } from "@jest/globals";
import { randomUUID } from "node:crypto";
import { mkdtemp, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { FixtureLine } from "../../../lib/fixtures/fixture-format.js";
import { type ReplayKernel, type ReplayTurn } from "../../../lib/kernel/replay-kernel.js";
import { call, getTask, kernelsClosedAfterEach, waitForState, results, rpc, sseRecords, stateOf, stream, userMessage } from "./a2a-http.js";
import type { JsonRpcReply, WireIacCode, WireStreamResponse } from "./a2a-wire.js";

const kernel = kernelsClosedAfterEach();

const CONTEXT = "agui-0123456789abcdef0123456789abcdef01234567";

const textOf = (result: WireStreamResponse | undefined): string =>
  (result?.statusUpdate?.status?.message?.parts ?? []).map((p) => p.text ?? "").join("");
/** The streamed text of a turn, without the `assistantFinal` status that repeats it whole. */
const streamedText = (out: WireStreamResponse[]) =>
  out
    .filter((r) => !r.statusUpdate?.metadata?.iac_code?.assistantFinal)
    .map(textOf)
    .join("");
const iacCodeOf = (result: WireStreamResponse | undefined): WireIacCode => result?.statusUpdate?.metadata?.iac_code ?? {};
const toolOf = (out: WireStreamResponse[], status: string) => out.map((r) => iacCodeOf(r).tool).find((tool) => tool?.status === status);

/** The data of a permission answer, as the adapter sends it (wire contract §5). */
function permission(taskId: string, overrides: Record<string, unknown> = {}) {
  return {
    schemaVersion: 1,
    kind: "permission",
    requestTaskId: taskId,
    inputId: `perm-${taskId}`,
    toolUseId: "toolu_deploy_1",
    decision: "allow_once",
    ...overrides,
  };
}

function answer(taskId: string, data: unknown, message: Record<string, unknown> = {}) {
  return {
    message: {
      messageId: `agui-resume-${randomUUID()}`,
      role: "ROLE_USER",
      contextId: CONTEXT,
      taskId,
      parts: [{ data, mediaType: "application/json" }],
      ...message,
    },
    configuration: { acceptedOutputModes: ["text/plain"] },
  };
}

const textAnswer = (taskId: string, text: string) =>
  userMessage(text, { taskId, contextId: CONTEXT, messageId: `agui-resume-${randomUUID()}` });

/** Starts a fixture on a new task; returns the task id and the frames of its first turn. */
async function start(k: ReplayKernel, text: string) {
  const out = results(await stream(k.url, "SendStreamingMessage", userMessage(text, { contextId: CONTEXT })));
  return { taskId: out[0]!.task!.id, out };
}

/** The SDK logs each JSON-RPC error it sends; keep the spec output readable. */
const quietSdkErrors = () => jest.spyOn(console, "error").mockImplementation(() => undefined);

const status = (state: string, iacCode?: Record<string, unknown>, text?: string): FixtureLine => ({
  delayMs: 0,
  frame: {
    statusUpdate: {
      status: {
        state,
        ...(text === undefined ? {} : { message: { messageId: "${taskId}-message", role: "ROLE_AGENT", parts: [{ text }] } }),
      },
      ...(iacCode ? { metadata: { iac_code: iacCode } } : {}),
    },
  },
});

describe("multi-turn fixtures over HTTP", () => {
  async function fixturesDir(files: Record<string, string[]>) {
    const dir = await mkdtemp(path.join(os.tmpdir(), "replay-turns-"));
    await writeFile(path.join(dir, "chat.jsonl"), JSON.stringify(status("TASK_STATE_COMPLETED", undefined, "chat")));
    for (const [name, lines] of Object.entries(files)) await writeFile(path.join(dir, `${name}.jsonl`), lines.join("\n"));
    return dir;
  }
  const line = (l: FixtureLine) => JSON.stringify(l);
  const question = {
    schemaVersion: 1,
    kind: "ask_user_question",
    requestTaskId: "${taskId}",
    contextId: "${contextId}",
    inputId: "q-${taskId}",
    toolUseId: "toolu_q",
    prompt: "Colour?",
    required: true,
  };

  it("play the task's turns by index and by `when`, from the fixture its first turn chose", async () => {
    const dir = await fixturesDir({
      colours: [
        line(status("TASK_STATE_WORKING", undefined, "pick a colour")),
        line(status("TASK_STATE_INPUT_REQUIRED", { input: question })),
        '{"turn": 1, "when": "blue"}',
        line(status("TASK_STATE_WORKING", undefined, "blue it is")),
        line(status("TASK_STATE_INPUT_REQUIRED", { input: { ...question, inputId: "q2-${taskId}", prompt: "Sure?" } })),
        '{"turn": 1, "when": "green"}',
        line(status("TASK_STATE_WORKING", undefined, "green it is")),
        line(status("TASK_STATE_COMPLETED")),
        '{"turn": 1}',
        line(status("TASK_STATE_WORKING", undefined, "some colour")),
        line(status("TASK_STATE_COMPLETED")),
        '{"turn": 2}',
        line(status("TASK_STATE_WORKING", undefined, "turn two")),
        line(status("TASK_STATE_COMPLETED")),
      ],
    });
    const k = await kernel({ fixturesDir: dir });

    const first = await start(k, "colours");
    expect(streamedText(first.out)).toBe("pick a colour");
    expect(stateOf(first.out.at(-1))).toBe("TASK_STATE_INPUT_REQUIRED");
    // "blue and green": the first matching section in the file wins. The answer names no fixture.
    const second = results(await stream(k.url, "SendStreamingMessage", textAnswer(first.taskId, "blue and green")));
    expect(second.map(stateOf)).toEqual(["TASK_STATE_INPUT_REQUIRED", "TASK_STATE_WORKING", "TASK_STATE_INPUT_REQUIRED"]);
    expect(streamedText(second)).toBe("blue it is");
    expect(iacCodeOf(second.at(-1)).input!.inputId).toBe(`q2-${first.taskId}`);
    // Turn 2 has one section; "chat" would pick the chat fixture on a new task, not here.
    const third = results(await stream(k.url, "SendStreamingMessage", textAnswer(first.taskId, "chat")));
    expect(streamedText(third)).toBe("turn two");
    expect(stateOf(third.at(-1))).toBe("TASK_STATE_COMPLETED");

    const other = await start(k, "/colours");
    const fallback = results(await stream(k.url, "SendStreamingMessage", textAnswer(other.taskId, "red")));
    expect(streamedText(fallback)).toBe("some colour");
    const green = await start(k, "fixture:colours");
    expect(streamedText(results(await stream(k.url, "SendStreamingMessage", textAnswer(green.taskId, "GREEN, no: green"))))).toBe(
      "green it is",
    );
  });

  it("answer a turn the fixture has no section for with a short completed reply", async () => {
    const dir = await fixturesDir({
      strict: [
        line(status("TASK_STATE_INPUT_REQUIRED", { input: question })),
        '{"turn": 1, "when": "yes"}',
        line(status("TASK_STATE_COMPLETED")),
      ],
    });
    const k = await kernel({ fixturesDir: dir });
    const { taskId } = await start(k, "strict");
    const out = results(await stream(k.url, "SendStreamingMessage", textAnswer(taskId, "no")));
    expect(out.map(stateOf)).toEqual(["TASK_STATE_INPUT_REQUIRED", "TASK_STATE_WORKING", "TASK_STATE_COMPLETED"]);
    expect(textOf(out[1])).toContain("The demo fixture `strict` has nothing recorded for turn 1");
    expect(out[1]!.statusUpdate!.status.message!.messageId).toBe(`${taskId}-message`);
  });

  it("give a script the answer: the text, then each data part's JSON", async () => {
    const turns: ReplayTurn[] = [];
    const k = await kernel({
      script: (turn) => {
        turns.push(turn);
        return turn.turnIndex === 0
          ? [status("TASK_STATE_INPUT_REQUIRED", { input: { ...question, kind: "permission", inputId: "p" } })]
          : [status("TASK_STATE_COMPLETED")];
      },
    });
    const { taskId } = await start(k, "go");
    const data = permission(taskId, { inputId: "p", toolUseId: "toolu_q", decision: "deny" });
    await stream(k.url, "SendStreamingMessage", answer(taskId, data));
    expect(turns.map((t) => [t.turnIndex, t.answer])).toEqual([
      [0, "go"],
      [1, JSON.stringify(data)],
    ]);
    expect(turns[1]!.answer).toContain('"decision":"deny"');
  });
});

describe("the permission fixture", () => {
  it("parks on a permission projection bound to the live task", async () => {
    const k = await kernel();
    const { taskId, out } = await start(k, "permission");
    expect(out.map(stateOf).at(-1)).toBe("TASK_STATE_INPUT_REQUIRED");
    expect(toolOf(out, "started")).toEqual({ status: "started", toolUseId: "toolu_deploy_1", name: "ros_deploy_stack" });
    expect(streamedText(out)).toMatch(/^I'll deploy the stack/);
    expect(iacCodeOf(out.at(-1)).input).toMatchObject({
      schemaVersion: 1,
      kind: "permission",
      requestTaskId: taskId,
      contextId: CONTEXT,
      inputId: `perm-${taskId}`,
      toolUseId: "toolu_deploy_1",
      toolName: "ros_deploy_stack",
      isReadOnly: false,
      required: true,
    });
  });

  it("resumes the parked task with the allow section on a six-key allow_once answer", async () => {
    const k = await kernel();
    const { taskId } = await start(k, "permission");
    const out = results(await stream(k.url, "SendStreamingMessage", answer(taskId, permission(taskId))));
    expect(out[0]!.task).toMatchObject({ id: taskId, status: { state: "TASK_STATE_INPUT_REQUIRED" } });
    // The answered projection is gone from the snapshot the resumed stream starts with.
    expect(out[0]!.task!.metadata?.iac_code?.input).toBeUndefined();
    expect(out.every((r) => (r.task?.id ?? r.statusUpdate?.taskId) === taskId)).toBe(true);
    expect(out.map((r) => iacCodeOf(r).tool?.status).filter(Boolean)).toEqual(["progress", "progress", "progress", "completed"]);
    expect(toolOf(out, "completed")).toMatchObject({ toolUseId: "toolu_deploy_1", result: { status: "CREATE_COMPLETE" } });
    expect(streamedText(out)).toMatch(/^The stack `demo-vpc-ecs` is deployed/);
    expect(stateOf(out.at(-1))).toBe("TASK_STATE_COMPLETED");
  });

  it("plays the deny section on a deny answer: the tool fails, the task completes", async () => {
    const k = await kernel();
    const { taskId } = await start(k, "permission");
    const out = results(await stream(k.url, "SendStreamingMessage", answer(taskId, permission(taskId, { decision: "deny" }))));
    expect(toolOf(out, "failed")).toMatchObject({ toolUseId: "toolu_deploy_1", result: expect.stringContaining("denied by user") });
    expect(toolOf(out, "completed")).toBeUndefined();
    expect(streamedText(out)).toMatch(/^Understood: I did not deploy anything/);
    expect(stateOf(out.at(-1))).toBe("TASK_STATE_COMPLETED");
  });

  it("takes the answer's keys in any order", async () => {
    const k = await kernel();
    const { taskId } = await start(k, "permission");
    const shuffled = Object.fromEntries(Object.entries(permission(taskId)).reverse());
    const out = results(await stream(k.url, "SendStreamingMessage", answer(taskId, shuffled)));
    expect(stateOf(out.at(-1))).toBe("TASK_STATE_COMPLETED");
  });
});

describe("a malformed permission answer", () => {
  type Case = [string, (taskId: string) => object, RegExp];
  const cases: Case[] = [
    ["a seventh key", (id) => answer(id, { ...permission(id), contextId: CONTEXT }), /exactly the keys .*unexpected contextId/],
    ["a missing key", (id) => answer(id, (({ toolUseId: _, ...rest }) => rest)(permission(id))), /missing toolUseId/],
    [
      "a requestTaskId that is not message.taskId",
      (id) => answer(id, permission(id, { requestTaskId: "task-elsewhere" })),
      /message\.taskId .* differs from requestTaskId "task-elsewhere"/,
    ],
    ["no message.taskId", (id) => answer(id, permission(id), { taskId: undefined }), /message\.taskId must name the task/],
    [
      "a wrong inputId",
      (id) => answer(id, permission(id, { inputId: "perm-stale" })),
      /inputId "perm-stale" is not the task's pending permission \("perm-/,
    ],
    [
      "a bad decision",
      (id) => answer(id, permission(id, { decision: "allow_always" })),
      /decision must be one of allow_once, deny, not "allow_always"/,
    ],
    [
      "a text mediaType",
      (id) => ({ message: { ...answer(id, permission(id)).message, parts: [{ data: permission(id), mediaType: "text/plain" }] } }),
      /mediaType "application\/json", not "text\/plain"/,
    ],
    [
      "no mediaType",
      (id) => ({ message: { ...answer(id, permission(id)).message, parts: [{ data: permission(id) }] } }),
      /mediaType "application\/json", not none/,
    ],
    ["the agent role", (id) => answer(id, permission(id), { role: "ROLE_AGENT" }), /role ROLE_USER/],
    [
      "two answers in one message",
      (id) => ({
        message: {
          ...answer(id, permission(id)).message,
          parts: [
            { data: permission(id), mediaType: "application/json" },
            { data: permission(id), mediaType: "application/json" },
          ],
        },
      }),
      /exactly one permission answer, this one has 2/,
    ],
    ["schemaVersion 2", (id) => answer(id, permission(id, { schemaVersion: 2 })), /schemaVersion must be 1/],
    ["an empty toolUseId", (id) => answer(id, permission(id, { toolUseId: "" })), /toolUseId must be a non-empty string/],
  ];

  it.each(cases)("(%s) is refused with -32602 before any event; the task stays parked and answerable", async (_label, build, message) => {
    const k = await kernel();
    const { taskId } = await start(k, "permission");
    const before = await getTask(k, taskId);

    const quiet = quietSdkErrors();
    const streaming = await call(k.url, "SendStreamingMessage", build(taskId));
    const sideband = await rpc(k.url, "SendMessage", build(taskId));
    quiet.mockRestore();
    expect(streaming.status).toBe(200);
    expect(streaming.headers.get("content-type")).toMatch(/^application\/json/);
    const refused = (await streaming.json()) as JsonRpcReply<never>;
    expect(refused.error).toMatchObject({ code: -32602, message: expect.stringMatching(/^Invalid permission answer: /) });
    expect(refused.error!.message).toMatch(message);
    expect(sideband.error).toMatchObject({ code: -32602, message: refused.error!.message });

    // Nothing changed: same state, same history, same pending projection.
    expect(await getTask(k, taskId)).toEqual(before);
    // The refused calls did not count as turns: a correct answer plays turn 1.
    const out = results(await stream(k.url, "SendStreamingMessage", answer(taskId, permission(taskId, { decision: "deny" }))));
    expect(toolOf(out, "failed")).toBeDefined();
    expect(stateOf(out.at(-1))).toBe("TASK_STATE_COMPLETED");
  });

  it("is refused for a task that waits on a question, not a permission", async () => {
    const k = await kernel();
    const { taskId } = await start(k, "question");
    const quiet = quietSdkErrors();
    const refused = await rpc(k.url, "SendStreamingMessage", answer(taskId, permission(taskId)));
    quiet.mockRestore();
    expect(refused.error).toEqual(expect.objectContaining({ code: -32602, message: expect.stringContaining("has no pending permission") }));
  });

  it("to an unknown or finished task gets the SDK's own error", async () => {
    const k = await kernel();
    const quiet = quietSdkErrors();
    const unknown = await rpc(k.url, "SendStreamingMessage", answer("no-such-task", permission("no-such-task")));
    const { taskId } = await start(k, "permission");
    await rpc(k.url, "CancelTask", { id: taskId });
    const canceled = await rpc(k.url, "SendStreamingMessage", answer(taskId, permission(taskId)));
    quiet.mockRestore();
    expect(unknown.error!.code).toBe(-32001);
    expect(canceled.error!.code).toBe(-32004);
  });

  it("is not confused with other data parts", async () => {
    const k = await kernel();
    const { taskId } = await start(k, "question");
    const out = results(await stream(k.url, "SendStreamingMessage", answer(taskId, { kind: "note", anything: true })));
    expect(stateOf(out.at(-1))).toBe("TASK_STATE_COMPLETED");
  });
});

describe("a sideband permission answer (SendMessage)", () => {
  it("on a parked task returns the task at once and resumes it in the background", async () => {
    const k = await kernel();
    const { taskId } = await start(k, "permission");
    const data = permission(taskId);
    const reply = await rpc(k.url, "SendMessage", answer(taskId, data, { messageId: `agui-resume-perm-${taskId}` }));
    expect(reply.error).toBeUndefined();
    expect(reply.result!.task).toMatchObject({ id: taskId, contextId: CONTEXT });
    expect(reply.result!.task!.metadata?.iac_code?.input).toBeUndefined();

    const done = await waitForState(k, taskId, "TASK_STATE_COMPLETED");
    expect(done.history).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ messageId: `agui-resume-perm-${taskId}`, parts: [{ data, mediaType: "application/json" }] }),
      ]),
    );
    expect(done.metadata?.iac_code?.input).toBeUndefined();
  });

  it("plays the next turn with the answer, as a streaming answer would", async () => {
    const input = {
      schemaVersion: 1,
      kind: "permission",
      requestTaskId: "${taskId}",
      contextId: "${contextId}",
      inputId: "p-${taskId}",
      toolUseId: "t",
      required: true,
    };
    const k = await kernel({
      script: (turn) =>
        turn.turnIndex === 0
          ? [status("TASK_STATE_INPUT_REQUIRED", { input })]
          : [status("TASK_STATE_COMPLETED", undefined, `turn ${turn.turnIndex}: ${turn.answer}`)],
    });
    const { taskId } = await start(k, "go");
    const data = permission(taskId, { inputId: `p-${taskId}`, toolUseId: "t", decision: "deny" });
    const reply = await rpc(k.url, "SendMessage", answer(taskId, data));
    expect(reply.result!.task!.id).toBe(taskId);
    const done = await waitForState(k, taskId, "TASK_STATE_COMPLETED");
    expect(done.status.message!.parts[0]!.text).toBe(`turn 1: ${JSON.stringify(data)}`);
  });

  it("while the task runs on is recorded: the task is returned and the permission is pending no more", async () => {
    const projection = {
      schemaVersion: 1,
      kind: "permission",
      requestTaskId: "${taskId}",
      contextId: "${contextId}",
      inputId: "perm-sub-${taskId}",
      toolUseId: "toolu_sub_1",
      toolName: "ros_deploy_stack",
      scope: "candidate",
      subPipelineId: "sub-1",
      required: true,
    };
    const executed = jest.fn();
    // Real delays: the run is still waiting on its last line while the answer arrives.
    const k = await kernel({
      timeScale: 1,
      script: (turn) => {
        executed(turn.turnIndex);
        return [status("TASK_STATE_WORKING", { pendingPermissions: [projection] }), { ...status("TASK_STATE_COMPLETED"), delayMs: 60_000 }];
      },
    });
    const records = sseRecords(await call(k.url, "SendStreamingMessage", userMessage("pipeline", { contextId: CONTEXT })));
    const taskId: string = (await records.next()).value!.data.result.task.id;
    const waiting = (await records.next()).value!.data.result;
    expect(iacCodeOf(waiting).pendingPermissions![0]!.inputId).toBe(`perm-sub-${taskId}`);
    expect((await getTask(k, taskId)).metadata!.iac_code!.pendingPermissions).toEqual([
      expect.objectContaining({ inputId: `perm-sub-${taskId}`, requestTaskId: taskId }),
    ]);

    const data = permission(taskId, { inputId: `perm-sub-${taskId}`, toolUseId: "toolu_sub_1" });
    const reply = await rpc(k.url, "SendMessage", answer(taskId, data));
    expect(reply.result!.task).toMatchObject({ id: taskId, status: { state: "TASK_STATE_WORKING" } });
    expect(reply.result!.task!.metadata?.iac_code?.pendingPermissions).toBeUndefined();
    expect(reply.result!.task!.history!.at(-1)!.parts).toEqual([{ data, mediaType: "application/json" }]);
    expect(executed.mock.calls).toEqual([[0]]);

    // Answered once: the same answer again is refused.
    const quiet = quietSdkErrors();
    const again = await rpc(k.url, "SendMessage", answer(taskId, data));
    quiet.mockRestore();
    expect(again.error).toMatchObject({ code: -32602, message: expect.stringContaining("has no pending permission") });

    expect((await rpc(k.url, "CancelTask", { id: taskId })).result!.status.state).toBe("TASK_STATE_CANCELED");
    for await (const _ of records);
  });
});

describe("GetTask on a parked task", () => {
  it("shows the input projection in task.metadata.iac_code, and drops it once answered", async () => {
    const k = await kernel();
    const { taskId, out } = await start(k, "question");
    const parked = await getTask(k, taskId);
    expect(parked.status.state).toBe("TASK_STATE_INPUT_REQUIRED");
    expect(parked.metadata!.iac_code!.input).toEqual(iacCodeOf(out.at(-1)).input);
    expect(parked.metadata!.iac_code!.input).toMatchObject({
      kind: "ask_user_question",
      inputId: `question-${taskId}`,
      requestTaskId: taskId,
    });

    const resumed = results(await stream(k.url, "SendStreamingMessage", textAnswer(taskId, "Shanghai")));
    expect(streamedText(resumed)).toMatch(/^Deploying to Shanghai \(cn-shanghai\)/);
    const done = await getTask(k, taskId);
    expect(done.status.state).toBe("TASK_STATE_COMPLETED");
    expect(done.metadata?.iac_code?.input).toBeUndefined();
  });

  it("keeps an interrupt raised at WORKING when later statuses carry other iac_code metadata", async () => {
    const input = {
      schemaVersion: 1,
      kind: "permission",
      requestTaskId: "${taskId}",
      contextId: "${contextId}",
      inputId: "p-${taskId}",
      toolUseId: "t",
      required: true,
    };
    const usage = { inputTokens: 1, outputTokens: 2, totalTokens: 3 };
    const k = await kernel({
      script: () => [status("TASK_STATE_WORKING", { input }), status("TASK_STATE_WORKING", { usage }), status("TASK_STATE_INPUT_REQUIRED")],
    });
    const { taskId } = await start(k, "go");
    // The SDK alone would keep only the last status's iac_code ({usage}).
    expect((await getTask(k, taskId)).metadata!.iac_code).toEqual({
      usage,
      input: { ...input, requestTaskId: taskId, contextId: CONTEXT, inputId: `p-${taskId}` },
    });
  });

  it("drops the projection when the parked task is canceled", async () => {
    const k = await kernel();
    const { taskId } = await start(k, "permission");
    await rpc(k.url, "CancelTask", { id: taskId });
    const canceled = await getTask(k, taskId);
    expect(canceled.status.state).toBe("TASK_STATE_CANCELED");
    expect(canceled.metadata?.iac_code?.input).toBeUndefined();
  });
});

describe("the question and deploy-confirm fixtures", () => {
  it.each([
    ["Hangzhou", /^Deploying to Hangzhou \(cn-hangzhou\)/],
    ["Shanghai", /^Deploying to Shanghai/],
    ["cn-beijing please", /^Deploying to the region you chose/],
  ])("question answered %j", async (text, reply) => {
    const k = await kernel();
    const { taskId } = await start(k, "question");
    const out = results(await stream(k.url, "SendStreamingMessage", textAnswer(taskId, text)));
    expect(streamedText(out)).toMatch(reply);
    expect(stateOf(out.at(-1))).toBe("TASK_STATE_COMPLETED");
  });

  it.each([
    ['{"action": "confirm", "parameter_overrides": {}}', /^Confirmed\./],
    ['{"action": "adjust", "parameter_overrides": {"InstanceCount": 3}}', /^Sure\. Which parameters/],
    ['{"action": "cancel", "parameter_overrides": {}}', /^Canceled: I did not create anything/],
    ["deploy it", /^I could not tell which action you chose/],
  ])("deploy-confirm answered %s", async (text, reply) => {
    const k = await kernel();
    const { taskId, out: first } = await start(k, "deploy-confirm");
    expect(iacCodeOf(first.at(-1)).input).toMatchObject({ kind: "deployment_confirmation", inputId: `confirm-${taskId}` });
    const out = results(await stream(k.url, "SendStreamingMessage", textAnswer(taskId, text)));
    expect(toolOf(out, "completed")).toMatchObject({ toolUseId: "toolu_confirm_1" });
    expect(streamedText(out)).toMatch(reply);
    expect(stateOf(out.at(-1))).toBe("TASK_STATE_COMPLETED");
  });
});
