/**
 * Pipeline mode in the demo kernel, over HTTP: the recorded pipeline
 * fixtures and their envelopes, the recovery route, `drop` lines, and
 * sideband permission answers that continue a pipeline.
 */
import { describe, expect, it } from "@jest/globals";
import { randomUUID } from "node:crypto";
import type { FixtureLine } from "../../../lib/fixtures/fixture-format.js";
import { type ReplayKernel } from "../../../lib/kernel/replay-kernel.js";
import {
  call,
  getTask,
  kernelsClosedAfterEach,
  waitForState,
  results,
  rpc,
  sseRecords,
  stateOf,
  stream,
  userMessage,
  type SseRecord,
} from "./a2a-http.js";
import type { JsonRpcReply, RecoveryBody, WireEnvelope, WireSnapshot, WireStreamResponse } from "./a2a-wire.js";

const kernel = kernelsClosedAfterEach();

const CONTEXT = "agui-89abcdef0123456789abcdef0123456789abcdef";
const URI = "urn:iac-code:a2a:pipeline-events:v1";
const SCOPES = ["pipeline", "step", "candidate", "candidate_step", "interrupt", "stack", "cleanup"];
const STATUSES = ["working", "input_required", "failed", "completed", "canceled"];
const TASK_STATE_OF: Record<string, string> = {
  input_required: "TASK_STATE_INPUT_REQUIRED",
  waiting_input: "TASK_STATE_INPUT_REQUIRED",
  failed: "TASK_STATE_FAILED",
  canceled: "TASK_STATE_CANCELED",
  completed: "TASK_STATE_COMPLETED",
};
const SNAPSHOT_KEYS = [
  "schemaVersion",
  "snapshotVersion",
  "pipelineRunId",
  "taskId",
  "contextId",
  "pipelineName",
  "status",
  "lastSequence",
  "generatedAt",
  "steps",
  "display",
  "stacks",
  "cleanup",
  "normalHandoff",
  "pendingNormalHandoff",
  "pendingTerminal",
  "pendingInput",
  "control",
  "seenEventIds",
];

/** A frame's envelopes in the order the adapter maps them: `pipelineBatch.events`, then `pipeline`. */
function envelopesOf(result: WireStreamResponse | undefined): WireEnvelope[] {
  const iacCode = result?.statusUpdate?.metadata?.iac_code;
  if (!iacCode) return [];
  return [...(iacCode.pipelineBatch?.events ?? []), ...(iacCode.pipeline ? [iacCode.pipeline] : [])];
}
const allEnvelopes = (out: WireStreamResponse[]) => out.flatMap(envelopesOf);
const typesOf = (envelopes: WireEnvelope[]) => envelopes.map((e) => e.eventType);

async function start(k: ReplayKernel, text: string) {
  const out = results(await stream(k.url, "SendStreamingMessage", userMessage(text, { contextId: CONTEXT })));
  return { taskId: out[0]!.task!.id, out };
}

function permissionAnswer(taskId: string, inputId: string, toolUseId: string, decision: string) {
  return {
    message: {
      messageId: `agui-resume-${randomUUID()}`,
      role: "ROLE_USER",
      contextId: CONTEXT,
      taskId,
      parts: [
        {
          data: { schemaVersion: 1, kind: "permission", requestTaskId: taskId, inputId, toolUseId, decision },
          mediaType: "application/json",
        },
      ],
    },
    configuration: { acceptedOutputModes: ["text/plain"] },
  };
}

async function recovery(k: ReplayKernel, query: Record<string, string>, headers: Record<string, string> = {}) {
  const url = new URL("iac-code/pipeline/state", k.url);
  url.search = new URLSearchParams(query).toString();
  const response = await fetch(url, { headers: { "A2A-Version": "1.0", ...headers } });
  return { status: response.status, body: (await response.json()) as RecoveryBody };
}

/** Every field the contract's envelope has, with the shapes the scope needs. */
function expectEnvelope(envelope: WireEnvelope, taskId: string) {
  expect(envelope).toMatchObject({
    schemaVersion: "1.0",
    extensionUri: URI,
    eventId: expect.stringMatching(/^evt-[0-9a-f]{32}$/),
    sequence: expect.any(Number),
    createdAt: expect.any(String),
    eventType: expect.stringMatching(/^[a-z_]+$/),
    pipelineRunId: `prun-${taskId}`,
    taskId,
    contextId: CONTEXT,
    pipelineName: expect.any(String),
    data: expect.any(Object),
    iacCodeSessionId: `sess-${CONTEXT}`,
  });
  expect(Number.isInteger(envelope.sequence) && envelope.sequence > 0).toBe(true);
  expect(new Date(envelope.createdAt).toISOString()).toBe(envelope.createdAt);
  expect(SCOPES).toContain(envelope.scope);
  expect(STATUSES).toContain(envelope.status);
  const { scope, step, candidate, candidateStep, data } = envelope;
  if (["step", "candidate", "candidate_step", "interrupt", "stack"].includes(scope)) {
    expect(step).toMatchObject({ id: expect.any(String), attempt: expect.any(Number) });
    expect(step!.runId).toBe(`step-${step!.id}-${step!.attempt}`);
  }
  if (scope === "candidate" || scope === "candidate_step") {
    expect(candidate).toMatchObject({ id: expect.any(String), index: expect.any(Number), attempt: expect.any(Number) });
    expect(candidate!.runId).toBe(`candidate-${candidate!.id}-${candidate!.index}-${candidate!.attempt}`);
  }
  if (scope === "candidate_step")
    expect(candidateStep).toMatchObject({ id: expect.any(String), runId: expect.any(String), attempt: expect.any(Number) });
  // The standard-mapped data shapes (contract §3).
  const shapes: Record<string, object> = {
    text_delta: { text: expect.any(String) },
    thinking_delta: { type: "raw_thinking", text: expect.any(String) },
    tool_started: { toolUseId: expect.any(String), toolName: expect.any(String), input: expect.anything() },
    tool_result: { toolUseId: expect.any(String), toolName: expect.any(String), isError: expect.any(Boolean), result: expect.anything() },
    usage: {
      provider: expect.any(String),
      model: expect.any(String),
      inputTokens: expect.any(Number),
      outputTokens: expect.any(Number),
      totalTokens: expect.any(Number),
      cachedInputTokens: expect.any(Number),
    },
  };
  if (shapes[envelope.eventType]) expect(data).toMatchObject(shapes[envelope.eventType]!);
}

/** Each frame's envelopes are well formed and its task state is the one their `status` maps to. */
function expectWellFormedFrames(out: WireStreamResponse[], taskId: string) {
  for (const result of out) {
    const iacCode = result.statusUpdate?.metadata?.iac_code;
    if (iacCode?.pipelineBatch) {
      expect(iacCode.pipelineBatch).toEqual({ schemaVersion: "1.0", extensionUri: URI, events: expect.any(Array) });
      expect(iacCode.pipelineBatch.events.length).toBeGreaterThan(1);
    }
    for (const envelope of envelopesOf(result)) {
      expectEnvelope(envelope, taskId);
      expect(stateOf(result)).toBe(TASK_STATE_OF[envelope.status] ?? "TASK_STATE_WORKING");
    }
  }
}

/**
 * Event ids are unique and sequences increase, except `resent` re-sends:
 * each repeats an earlier envelope exactly. Returns the envelopes without the re-sends.
 */
function expectOrdered(envelopes: WireEnvelope[], resent = 0) {
  const first = new Map<string, WireEnvelope>();
  const repeats: WireEnvelope[] = [];
  for (const envelope of envelopes) {
    if (first.has(envelope.eventId)) {
      expect(envelope).toEqual(first.get(envelope.eventId));
      repeats.push(envelope);
    } else first.set(envelope.eventId, envelope);
  }
  expect(repeats).toHaveLength(resent);
  const unique = [...first.values()];
  unique.forEach((envelope, i) => {
    if (i > 0) expect(envelope.sequence).toBeGreaterThan(unique[i - 1]!.sequence);
  });
  return unique;
}

describe("the pipeline fixture", () => {
  it("replays a two-step pipeline whose second step runs two parallel candidates, then completes", async () => {
    const k = await kernel();
    const { taskId, out } = await start(k, "pipeline");
    expectWellFormedFrames(out, taskId);
    const envelopes = allEnvelopes(out);
    const unique = expectOrdered(envelopes, 1);
    expect(unique.map((e) => e.sequence)).toEqual(unique.map((_, i) => i + 1));
    expect(stateOf(out.at(-1))).toBe("TASK_STATE_COMPLETED");
    expect(envelopesOf(out.at(-1)).map((e) => e.eventType)).toEqual(["pipeline_completed"]);
    expect(unique[0]!.eventType).toBe("pipeline_started");

    const types = typesOf(unique);
    for (const type of [
      "step_started",
      "text_delta",
      "thinking_delta",
      "tool_started",
      "tool_result",
      "step_completed",
      "candidate_started",
      "candidate_step_started",
      "stack_progress",
      "candidate_step_completed",
      "candidate_completed",
      "candidate_selected",
      "message_started",
      "context_usage",
      "backup_committed",
      "usage",
    ])
      expect(types).toContain(type);
    expect(types).not.toContain("pipeline_error");
    expect(out.some((r) => r.statusUpdate?.metadata?.iac_code?.pipelineBatch)).toBe(true);

    // Step plan opens and closes before generate, which closes last.
    const steps = unique.filter((e) => e.eventType.startsWith("step_")).map((e) => `${e.eventType}:${e.step!.id}`);
    expect(steps).toEqual(["step_started:plan", "step_completed:plan", "step_started:generate", "step_completed:generate"]);
    // Two candidates in step generate, whose text deltas interleave.
    const candidates = new Set(unique.filter((e) => e.eventType === "candidate_started").map((e) => e.candidate!.id));
    expect(candidates.size).toBe(2);
    const speakers = unique.filter((e) => e.eventType === "text_delta" && e.candidate).map((e) => e.candidate!.id);
    const switches = speakers.filter((id, i) => i > 0 && id !== speakers[i - 1]).length;
    expect(switches).toBeGreaterThanOrEqual(2);
    for (const e of unique.filter((e) => e.candidate)) expect(e.step!.id).toBe("generate");
    const selected = unique.find((e) => e.eventType === "candidate_selected");
    expect(candidates).toContain(selected!.data.candidateId);

    // The re-send: a stack_progress sent again in a later frame.
    const resent = envelopes.find((e, i) => envelopes.findIndex((other) => other.eventId === e.eventId) !== i);
    expect(resent!.eventType).toBe("stack_progress");
  });
});

describe("the pipeline-permission fixture", () => {
  const INPUT = (taskId: string) => `perm-deploy-${taskId}`;

  it("parks on a permission while step deploy is still open", async () => {
    const k = await kernel();
    const { taskId, out } = await start(k, "pipeline-permission");
    expectWellFormedFrames(out, taskId);
    const unique = expectOrdered(allEnvelopes(out));
    expect(stateOf(out.at(-1))).toBe("TASK_STATE_INPUT_REQUIRED");
    const parked = out.at(-1)!.statusUpdate!.metadata!.iac_code!;
    expect(parked.input).toMatchObject({
      schemaVersion: 1,
      kind: "permission",
      requestTaskId: taskId,
      contextId: CONTEXT,
      inputId: INPUT(taskId),
      toolUseId: "toolu_pipeline_deploy_1",
      toolName: "ros_deploy_stack",
      isReadOnly: false,
      required: true,
    });
    // Not a sideband wait: no candidate scope, no sub-pipeline.
    expect(parked.input!.scope).not.toBe("candidate");
    expect(parked.input!.subPipelineId).toBeUndefined();
    expect(typesOf(envelopesOf(out.at(-1)))).toEqual(["permission_requested", "input_required"]);
    const deploy = unique.filter((e) => e.step?.id === "deploy").map((e) => e.eventType);
    expect(deploy).toContain("step_started");
    expect(deploy).not.toContain("step_completed");
    expect((await getTask(k, taskId)).metadata!.iac_code!.input!.inputId).toBe(INPUT(taskId));
  });

  it.each([
    ["allow_once", ["tool_progress", "stack_progress", "tool_result"], false],
    ["deny", ["tool_result"], true],
  ])("resumes on a six-key %s answer: the same pipeline run goes on and completes", async (decision, expected, isError) => {
    const k = await kernel();
    const first = await start(k, "pipeline-permission");
    const out = results(
      await stream(k.url, "SendStreamingMessage", permissionAnswer(first.taskId, INPUT(first.taskId), "toolu_pipeline_deploy_1", decision)),
    );
    expectWellFormedFrames(out, first.taskId);
    const turn0 = allEnvelopes(first.out);
    const unique = expectOrdered([...turn0, ...allEnvelopes(out)]);
    const resumed = unique.slice(turn0.length);
    expect(resumed[0]).toMatchObject({ eventType: "input_received", step: { id: "deploy" }, data: { decision } });
    expect(new Set(unique.map((e) => e.pipelineRunId)).size).toBe(1);
    const types = typesOf(resumed);
    for (const type of expected) expect(types).toContain(type);
    expect(resumed.find((e) => e.eventType === "tool_result")!.data.isError).toBe(isError);
    expect(types.slice(-2)).toEqual(["step_completed", "pipeline_completed"]);
    expect(resumed.at(-2)!.step!.id).toBe("deploy");
    expect(stateOf(out.at(-1))).toBe("TASK_STATE_COMPLETED");
  });
});

describe("the pipeline-failed-step fixture", () => {
  it("fails a step, then the pipeline, with TASK_STATE_FAILED", async () => {
    const k = await kernel();
    const { taskId, out } = await start(k, "pipeline-failed-step");
    expectWellFormedFrames(out, taskId);
    const types = typesOf(expectOrdered(allEnvelopes(out)));
    expect(types.slice(-2)).toEqual(["step_failed", "pipeline_failed"]);
    expect(types).not.toContain("pipeline_error");
    expect(types).not.toContain("step_completed");
    expect(stateOf(out.at(-1))).toBe("TASK_STATE_FAILED");
    expect(out.map(stateOf).filter((s) => s === "TASK_STATE_FAILED")).toHaveLength(1);
  });
});

describe("the pipeline-cleanup fixture", () => {
  it("streams cleanup_started, cleanup_progress and cleanup_completed, then completes", async () => {
    const k = await kernel();
    const { taskId, out } = await start(k, "pipeline-cleanup");
    expectWellFormedFrames(out, taskId);
    const unique = expectOrdered(allEnvelopes(out));
    const types = typesOf(unique);
    expect(types[0]).toBe("cleanup_started");
    expect(types.at(-1)).toBe("cleanup_completed");
    expect(types.slice(1, -1).every((type) => type === "cleanup_progress")).toBe(true);
    expect(types.length).toBeGreaterThan(3);
    expect(unique.every((e) => e.scope === "cleanup")).toBe(true);
    expect(stateOf(out.at(-1))).toBe("TASK_STATE_COMPLETED");
  });
});

describe("the recovery route", () => {
  it("returns the events after the given sequence, in order, and a snapshot derived from them", async () => {
    const k = await kernel();
    const { taskId, out } = await start(k, "pipeline");
    const published = expectOrdered(allEnvelopes(out), 1);

    const all = await recovery(k, { taskId, afterSequence: "0" });
    expect(all.status).toBe(200);
    // The re-send is one event: recovery returns it once.
    expect(all.body.events).toEqual(published);
    const after = await recovery(k, { taskId, afterSequence: "20" });
    expect(after.body.events).toEqual(published.filter((e) => e.sequence > 20));
    expect(after.body.events[0]!.sequence).toBe(21);
    expect((await recovery(k, { taskId, afterSequence: String(published.at(-1)!.sequence) })).body.events).toEqual([]);

    const snapshot = all.body.snapshot!;
    expect(Object.keys(snapshot).sort()).toEqual([...SNAPSHOT_KEYS].sort());
    expect(snapshot).toMatchObject({
      schemaVersion: "1.1",
      snapshotVersion: published.length,
      pipelineRunId: `prun-${taskId}`,
      taskId,
      contextId: CONTEXT,
      pipelineName: "ros-stack-design",
      status: "completed",
      lastSequence: published.at(-1)!.sequence,
      seenEventIds: published.map((e) => e.eventId),
      pendingInput: null,
      cleanup: null,
    });
    expect(new Date(snapshot.generatedAt).getTime()).not.toBeNaN();
    expect(snapshot.steps.map((s) => [s.id, s.status])).toEqual([
      ["plan", "completed"],
      ["generate", "completed"],
    ]);
    const generate = snapshot.steps[1]!;
    expect(generate.selectedCandidateId).toBe("subp-generate-1");
    expect(generate.candidates.map((c) => [c.id, c.status, c.selected])).toEqual([
      ["subp-generate-0", "completed", false],
      ["subp-generate-1", "completed", true],
    ]);
    // One message per text coordinate: the plan step and each candidate.
    expect(snapshot.display.messages).toHaveLength(3);
    const texts = (message: WireSnapshot["display"]["messages"][number]) =>
      published.filter(
        (e) =>
          e.eventType === "text_delta" &&
          `${e.scope}:${[e.candidate?.runId, e.candidateStep?.runId, e.step!.runId].filter(Boolean).join(":")}` === message.id,
      );
    for (const message of snapshot.display.messages)
      expect(message.text).toBe(
        texts(message)
          .map((e) => e.data.text)
          .join(""),
      );
    expect(snapshot.display.messages[0]!.thinking).toMatch(/^The user wants/);
    expect(snapshot.display.toolResults).toEqual([expect.objectContaining({ toolUseId: "toolu_plan_read_1", isError: false })]);
    expect(snapshot.stacks.map((s) => [s.stackName, s.status])).toEqual([
      ["design-preview-a", "PREVIEW_COMPLETE"],
      ["design-preview-b", "PREVIEW_COMPLETE"],
    ]);
  });

  it("leaves the snapshot out with includeSnapshot=false", async () => {
    const k = await kernel();
    const { taskId } = await start(k, "pipeline-cleanup");
    const { status, body } = await recovery(k, { taskId, afterSequence: "3", includeSnapshot: "false" });
    expect(status).toBe(200);
    expect(body.snapshot).toBeNull();
    expect(body.events.map((e) => e.sequence)).toEqual([4, 5, 6, 7, 8]);
    const withSnapshot = await recovery(k, { taskId, afterSequence: "3" });
    expect(withSnapshot.body.snapshot!.cleanup).toMatchObject({ status: "completed", total: 3 });
  });

  it("shows a parked pipeline waiting in its open step, with the pending input", async () => {
    const k = await kernel();
    const { taskId, out } = await start(k, "pipeline-permission");
    const { body } = await recovery(k, { taskId, afterSequence: "0" });
    expect(body.snapshot).toMatchObject({ status: "input_required", pendingInput: out.at(-1)!.statusUpdate!.metadata!.iac_code!.input });
    expect(body.snapshot!.steps.map((s) => [s.id, s.status])).toEqual([
      ["validate", "completed"],
      ["deploy", "waiting_input"],
    ]);
    expect(body.snapshot!.display.permissions).toEqual([
      expect.objectContaining({ status: "pending", permission: expect.objectContaining({ inputId: `perm-deploy-${taskId}` }) }),
    ]);
  });

  it("answers 404 for an unknown task and for a task that published no pipeline envelope", async () => {
    const k = await kernel();
    const unknown = await recovery(k, { taskId: "no-such-task", afterSequence: "0" });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatchObject({ code: "PIPELINE_STATE_NOT_FOUND" });
    const { taskId } = await start(k, "chat");
    expect((await recovery(k, { taskId, afterSequence: "0" })).status).toBe(404);
  });

  it.each([
    ["no taskId", { afterSequence: "0" }],
    ["a negative afterSequence", { taskId: "t", afterSequence: "-1" }],
    ["a fractional afterSequence", { taskId: "t", afterSequence: "1.5" }],
    ["a non-numeric afterSequence", { taskId: "t", afterSequence: "x" }],
    ["a bad includeSnapshot", { taskId: "t", afterSequence: "0", includeSnapshot: "no" }],
  ])("refuses %s with 400", async (_label, query) => {
    const k = await kernel();
    const { status, body } = await recovery(k, query as Record<string, string>);
    expect(status).toBe(400);
    expect(body.error!.code).toBe("INVALID_ARGUMENT");
  });

  it("reads an integral float afterSequence and defaults a missing one to 0", async () => {
    const k = await kernel();
    const { taskId } = await start(k, "pipeline-cleanup");
    expect((await recovery(k, { taskId, afterSequence: "6.0" })).body.events.map((e) => e.sequence)).toEqual([7, 8]);
    expect((await recovery(k, { taskId })).body.events).toHaveLength(8);
  });

  it("requires the bearer token when the kernel does", async () => {
    const k = await kernel({ requireToken: "s3cret" });
    const auth = { authorization: "Bearer s3cret" };
    const out = results(await stream(k.url, "SendStreamingMessage", userMessage("pipeline-cleanup"), auth));
    const taskId = out[0]!.task!.id;
    const query = { taskId, afterSequence: "0" };
    expect((await recovery(k, query)).status).toBe(401);
    expect((await recovery(k, query, { authorization: "Bearer wrong" })).status).toBe(401);
    const ok = await recovery(k, query, auth);
    expect(ok.status).toBe(200);
    expect(ok.body.events).toHaveLength(8);
    // Recorded like the JSON-RPC calls, refused ones included.
    expect(k.recoveries.map((r) => [r.query, r.headers.authorization])).toEqual([
      [query, undefined],
      [query, "Bearer wrong"],
      [query, "Bearer s3cret"],
    ]);
  });
});

describe("a drop line", () => {
  /** Reads a stream until it ends or breaks; `broken` tells which. */
  async function readUntilCut(response: Response) {
    const records: SseRecord[] = [];
    let broken = false;
    try {
      for await (const record of sseRecords(response)) records.push(record);
    } catch {
      broken = true;
    }
    return { out: records.map((r) => r.data.result!), broken };
  }

  async function playUntilDrop(k: ReplayKernel) {
    const { out, broken } = await readUntilCut(
      await call(k.url, "SendStreamingMessage", userMessage("pipeline-drop", { contextId: CONTEXT })),
    );
    const taskId: string = out[0]!.task!.id;
    expect(broken).toBe(true);
    expect(out.map(stateOf).every((s) => s === "TASK_STATE_SUBMITTED" || s === "TASK_STATE_WORKING")).toBe(true);
    // Every frame before the drop line reached the client, and none after.
    const seen = allEnvelopes(out);
    expect(seen.at(-1)).toMatchObject({ eventType: "stack_progress", data: { status: "PREVIEW_IN_PROGRESS" } });
    return { taskId, seen };
  }

  it("cuts the stream after the frames before it; the task completes and recovery has the rest", async () => {
    const k = await kernel();
    const { taskId, seen } = await playUntilDrop(k);
    await waitForState(k, taskId, "TASK_STATE_COMPLETED");
    const { body } = await recovery(k, { taskId, afterSequence: String(seen.at(-1)!.sequence) });
    expect(typesOf(body.events)).toEqual(["text_delta", "stack_progress", "text_delta", "step_completed", "pipeline_completed"]);
    expectOrdered([...seen, ...body.events]);
    for (const envelope of body.events) expectEnvelope(envelope, taskId);
    expect(body.snapshot).toMatchObject({ status: "completed", lastSequence: body.events.at(-1)!.sequence });
  });

  it("leaves the task to SubscribeToTask: a subscriber in time sees the rest, a late one is refused and recovers", async () => {
    // Recorded delays: the replay goes on 200 ms after the cut. The test holds either way.
    const k = await kernel({ timeScale: 1 });
    const { taskId, seen } = await playUntilDrop(k);
    const subscription = await call(k.url, "SubscribeToTask", { id: taskId });
    const atAttach = await recovery(k, { taskId, afterSequence: String(seen.at(-1)!.sequence) });
    if (subscription.headers.get("content-type")?.startsWith("text/event-stream")) {
      const out = results(
        await (async () => {
          const records: SseRecord[] = [];
          for await (const record of sseRecords(subscription)) records.push(record);
          return records;
        })(),
      );
      expect(out[0]!.task).toMatchObject({ id: taskId });
      expect(stateOf(out.at(-1))).toBe("TASK_STATE_COMPLETED");
      const missed = (await recovery(k, { taskId, afterSequence: String(seen.at(-1)!.sequence) })).body.events;
      // What the subscriber got, after what recovery had when it attached, is everything after the cut.
      const recovered = atAttach.body.events;
      expect([...recovered, ...allEnvelopes(out).filter((e) => !recovered.some((r) => r.eventId === e.eventId))]).toEqual(missed);
    } else {
      expect(((await subscription.json()) as JsonRpcReply<never>).error!.code).toBe(-32004);
    }
    await waitForState(k, taskId, "TASK_STATE_COMPLETED");
    const { body } = await recovery(k, { taskId, afterSequence: String(seen.at(-1)!.sequence) });
    expect(typesOf(body.events)).toEqual(["text_delta", "stack_progress", "text_delta", "step_completed", "pipeline_completed"]);
  });

  const status = (state: string, text?: string): FixtureLine => ({
    delayMs: 0,
    frame: {
      statusUpdate: {
        status: { state, ...(text ? { message: { messageId: "${taskId}-message", role: "ROLE_AGENT", parts: [{ text }] } } : {}) },
      },
    },
  });

  it("as the first line sends the task, then cuts", async () => {
    const k = await kernel({
      script: () => [{ delayMs: 0, drop: true }, status("TASK_STATE_WORKING", "after"), status("TASK_STATE_COMPLETED")],
    });
    const { out, broken } = await readUntilCut(await call(k.url, "SendStreamingMessage", userMessage("go")));
    expect(broken).toBe(true);
    expect(out.map((r) => Object.keys(r)[0])).toEqual(["task"]);
    const done = await waitForState(k, out[0]!.task!.id, "TASK_STATE_COMPLETED");
    expect(done.status.state).toBe("TASK_STATE_COMPLETED");
  });

  it("after the stream ended at a terminal state changes nothing", async () => {
    const k = await kernel({ script: () => [status("TASK_STATE_COMPLETED", "done"), { delayMs: 0, drop: true }] });
    const { out, broken } = await readUntilCut(await call(k.url, "SendStreamingMessage", userMessage("go")));
    expect(broken).toBe(false);
    expect(out.map(stateOf)).toEqual(["TASK_STATE_SUBMITTED", "TASK_STATE_COMPLETED"]);
  });

  it("leaves other calls alone: the kernel keeps serving", async () => {
    const k = await kernel();
    await playUntilDrop(k);
    const { out } = await start(k, "pipeline-cleanup");
    expect(stateOf(out.at(-1))).toBe("TASK_STATE_COMPLETED");
  });
});

describe("the pipeline-sideband fixture", () => {
  const INPUT = (taskId: string) => `perm-subp-generate-1-${taskId}`;
  const TOOL = "toolu_candidate_b_create_1";

  it("announces a candidate's permission as pendingPermissions on a working task, and ends its turn still working", async () => {
    const k = await kernel();
    const { taskId, out } = await start(k, "pipeline-sideband");
    expectWellFormedFrames(out, taskId);
    expectOrdered(allEnvelopes(out));
    const waiting = out.find((r) => r.statusUpdate?.metadata?.iac_code?.pendingPermissions);
    expect(stateOf(waiting)).toBe("TASK_STATE_WORKING");
    expect(waiting!.statusUpdate!.metadata!.iac_code!.pendingPermissions).toEqual([
      expect.objectContaining({
        kind: "permission",
        requestTaskId: taskId,
        contextId: CONTEXT,
        inputId: INPUT(taskId),
        toolUseId: TOOL,
        scope: "candidate",
        subPipelineId: "subp-generate-1",
        required: true,
      }),
    ]);
    expect(envelopesOf(waiting)[0]).toMatchObject({
      eventType: "permission_requested",
      candidate: { id: "subp-generate-1" },
      permission: { inputId: INPUT(taskId) },
    });
    // Candidate A goes on meanwhile; the turn ends with the task still working.
    expect(out.indexOf(waiting!)).toBeLessThan(out.length - 1);
    expect(stateOf(out.at(-1))).toBe("TASK_STATE_WORKING");
    const task = await getTask(k, taskId);
    expect(task.status.state).toBe("TASK_STATE_WORKING");
    expect(task.metadata!.iac_code!.pendingPermissions!.map((p) => p.inputId)).toEqual([INPUT(taskId)]);
  });

  it.each([
    ["allow_once", "subp-generate-1", "candidate_completed"],
    ["deny", "subp-generate-0", "candidate_failed"],
  ])("continues the pipeline on a sideband %s answer (SendMessage) as the task's next turn", async (decision, selected, candidateEnd) => {
    const k = await kernel();
    const { taskId, out } = await start(k, "pipeline-sideband");
    const turn0 = expectOrdered(allEnvelopes(out));
    const reply = await rpc(k.url, "SendMessage", permissionAnswer(taskId, INPUT(taskId), TOOL, decision));
    expect(reply.error).toBeUndefined();
    expect(reply.result!.task).toMatchObject({ id: taskId });
    expect(reply.result!.task!.metadata?.iac_code?.pendingPermissions).toBeUndefined();

    const done = await waitForState(k, taskId, "TASK_STATE_COMPLETED");
    expect(done.metadata?.iac_code?.pendingPermissions).toBeUndefined();
    const { body } = await recovery(k, { taskId, afterSequence: String(turn0.at(-1)!.sequence) });
    for (const envelope of body.events) expectEnvelope(envelope, taskId);
    const resumed = expectOrdered([...turn0, ...body.events]).slice(turn0.length);
    expect(resumed[0]).toMatchObject({ eventType: "input_received", candidate: { id: "subp-generate-1" }, data: { decision } });
    expect(typesOf(resumed)).toContain(candidateEnd);
    expect(resumed.find((e) => e.eventType === "candidate_selected")!.data.candidateId).toBe(selected);
    expect(typesOf(resumed).slice(-2)).toEqual(["step_completed", "pipeline_completed"]);
    expect(body.snapshot).toMatchObject({ status: "completed", lastSequence: resumed.at(-1)!.sequence });
  });

  it("plays the answer right after the lines of a replay still running, on the same stream", async () => {
    const projection = {
      schemaVersion: 1,
      kind: "permission",
      requestTaskId: "${taskId}",
      contextId: "${contextId}",
      inputId: "perm-sub-${taskId}",
      toolUseId: "toolu_sub_1",
      scope: "candidate",
      subPipelineId: "sub-1",
      required: true,
    };
    const text = (t: string, delayMs = 0): FixtureLine => ({
      delayMs,
      frame: {
        statusUpdate: {
          status: { state: "TASK_STATE_WORKING", message: { messageId: "${taskId}-message", role: "ROLE_AGENT", parts: [{ text: t }] } },
        },
      },
    });
    const turns: number[] = [];
    // Recorded delays: the answer arrives while the replay waits on its last line.
    const k = await kernel({
      timeScale: 1,
      script: (turn) => {
        turns.push(turn.turnIndex);
        if (turn.turnIndex > 0)
          return [
            text(`turn ${turn.turnIndex}: ${JSON.parse(turn.answer).decision}`),
            { delayMs: 0, frame: { statusUpdate: { status: { state: "TASK_STATE_COMPLETED" } } } },
          ];
        return [
          {
            delayMs: 0,
            frame: {
              statusUpdate: { status: { state: "TASK_STATE_WORKING" }, metadata: { iac_code: { pendingPermissions: [projection] } } },
            },
          },
          text("candidate A goes on", 1500),
        ];
      },
    });
    const records = sseRecords(await call(k.url, "SendStreamingMessage", userMessage("go", { contextId: CONTEXT })));
    const taskId: string = (await records.next()).value!.data.result.task.id;
    expect((await records.next()).value!.data.result.statusUpdate.metadata.iac_code.pendingPermissions).toHaveLength(1);
    const reply = await rpc(k.url, "SendMessage", permissionAnswer(taskId, `perm-sub-${taskId}`, "toolu_sub_1", "deny"));
    expect(reply.result!.task).toMatchObject({ id: taskId, status: { state: "TASK_STATE_WORKING" } });
    expect(turns).toEqual([0]);

    const rest: WireStreamResponse[] = [];
    for await (const record of records) rest.push(record.data.result!);
    const texts = rest.map((r) => r.statusUpdate?.status?.message?.parts?.[0]?.text);
    expect(texts).toEqual(["candidate A goes on", "turn 1: deny", undefined]);
    expect(stateOf(rest.at(-1))).toBe("TASK_STATE_COMPLETED");
    expect(turns).toEqual([0, 1]);
    // No Task frame in between: one stream, one turn after the other.
    expect(rest.every((r) => r.statusUpdate)).toBe(true);
  });
});
