/**
 * fast-check arbitraries for what a kernel may send on one run's stream:
 * A2A 1.0 `StreamResponse` results (the JSON-RPC `result` of each SSE
 * frame) mixing every signal the adapter reads — text deltas and finals,
 * thinking, tools in any status order, usage, artifacts, inputs
 * (interrupts), pipeline envelopes with repeated event ids and sequences
 * out of order, interleaved candidates — with keys and types nobody
 * defined, then an ending: a settled state, a stream that just stops, or an
 * upstream failure. Ids come from small pools so that the generated streams
 * open, reopen and close the same spans.
 */
import fc from "fast-check";
import { AguiError } from "../../lib/errors.js";
import { executionFailed } from "../../lib/a2a/rpc-errors.js";
import type { JsonRpcResult } from "../../lib/a2a/client.js";
import { KNOWN_EVENT_TYPES } from "../../lib/model/pipeline-event-types.js";
import type { ChainOptions } from "../../lib/testing/projection-chain.js";
import { textDigest } from "../../operators/project-text.js";

export const TASK_ID = "task-1";
export const CONTEXT_ID = "context-1";

type Json = Record<string, unknown>;

const STATES = [
  "SUBMITTED",
  "WORKING",
  "INPUT_REQUIRED",
  "COMPLETED",
  "FAILED",
  "CANCELED",
  "REJECTED",
  "AUTH_REQUIRED",
  "UNKNOWN",
  "PAUSED",
] as const;
/** Mostly WORKING, so streams run on for a while before something settles them. */
const midState = fc.oneof(
  { weight: 40, arbitrary: fc.constant("TASK_STATE_WORKING") },
  { weight: 1, arbitrary: fc.constantFrom(...STATES.map((state) => `TASK_STATE_${state}`), "working", "input-required", "cancelled") },
);

/** Text with the odd control character, emoji and empty string a kernel may send. */
const text = fc.oneof(
  { weight: 6, arbitrary: fc.string({ maxLength: 24 }) },
  { weight: 1, arbitrary: fc.constantFrom("", "\x1b[31mred\x1b[0m", "\u0007bell", "🙂 multi-byte", "line\nbreak", "hello") },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 12 }) },
);
const pick = <T>(...values: T[]) => fc.constantFrom(...values);
const maybe = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: undefined });
/** Present once in `oneIn` frames: what ends or pauses a run must not crowd out the rest. */
const rare = <T>(arbitrary: fc.Arbitrary<T>, oneIn: number) =>
  fc.oneof({ weight: oneIn - 1, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary });
const json = fc.jsonValue({ maxDepth: 3 });
/** Keys no contract defines, with any JSON value. */
const unknownKeys = fc.dictionary(fc.string({ maxLength: 8 }), json, { maxKeys: 2 });

const messageId = maybe(pick("msg-a", "msg-b", "msg-c"));
const toolId = maybe(pick("tool-a", "tool-b", "tool-c"));
const inputId = maybe(pick<unknown>("input-a", "input-b", 7));

/** A plain agent's tool call or result in a data part (`lib/model/agent-message-parts.ts`), ids and fields maybe missing. */
const toolPart = fc.oneof(
  fc.record(
    { type: fc.constant("tool-call"), id: toolId, name: maybe(pick("get_weather", "")), arguments: maybe(json) },
    { requiredKeys: ["type"] },
  ),
  fc.record({ type: fc.constant("tool-result"), toolCallId: toolId, payload: maybe(json) }, { requiredKeys: ["type"] }),
);

const message = fc.record(
  {
    messageId,
    role: pick<string | undefined>("ROLE_AGENT", "agent", undefined, "ROLE_USER"),
    parts: fc.array(fc.oneof(fc.record({ text }), fc.record({ data: json }), fc.record({ data: toolPart }), unknownKeys), { maxLength: 3 }),
  },
  { requiredKeys: ["parts"] },
);

const thinking = fc.record({ type: pick<unknown>("raw_thinking", "summary", 3), text }, { requiredKeys: [] });

const tool = fc.record(
  {
    status: pick("started", "input_complete", "completed", "failed", "progress", "input_delta", "exploded", undefined),
    toolUseId: toolId,
    name: maybe(pick("ros_deploy_stack", "read_file", "")),
    toolInput: maybe(json),
    inputSummary: maybe(text),
    result: maybe(json),
    progress: maybe(json),
  },
  { requiredKeys: ["status"] },
);

const usage = fc.record(
  {
    provider: maybe(pick("dashscope", "openai", "")),
    model: maybe(pick("qwen-max", "qwen-plus")),
    inputTokens: maybe(fc.oneof(fc.nat(5000), fc.double({ min: 0, max: 5000, noNaN: true }), fc.constant("12"))),
    outputTokens: maybe(fc.nat(5000)),
    totalTokens: maybe(fc.nat(10000)),
    cachedInputTokens: maybe(fc.nat(100)),
  },
  { requiredKeys: [] },
);

const INPUT_KINDS = [
  "permission",
  "ask_user_question",
  "candidate_selection",
  "deployment_confirmation",
  "cloud_resource_selection",
  "mystery",
];
const option = fc.record(
  { id: maybe(pick("o1", "o2", "")), label: maybe(text), value: maybe(json), description: maybe(text) },
  { requiredKeys: [] },
);
const input = fc.record(
  {
    required: pick<unknown>(true, true, true, false, "yes"),
    inputId,
    kind: maybe(pick(...INPUT_KINDS)),
    toolUseId: toolId,
    toolName: maybe(pick("ros_deploy_stack", "ask_user_question")),
    prompt: maybe(text),
    title: maybe(text),
    options: maybe(fc.oneof(fc.array(option, { maxLength: 3 }), json)),
    allowFreeText: maybe(fc.boolean()),
    language: maybe(pick("en", "ja", "ja-JP", "xx")),
    scope: maybe(pick("candidate", "pipeline")),
    subPipelineId: maybe(pick("c1")),
    deploymentSummary: maybe(json),
    secretToolInput: maybe(json),
  },
  { requiredKeys: ["required"] },
);

/** One pipeline envelope: any event type, ids and sequences that repeat and go backwards, candidates side by side. */
const envelope = fc.record(
  {
    schemaVersion: pick("1.0"),
    eventType: fc.oneof(
      { weight: 8, arbitrary: fc.constantFrom(...KNOWN_EVENT_TYPES) },
      { weight: 1, arbitrary: fc.string({ maxLength: 10 }) },
    ),
    eventId: maybe(pick("evt-1", "evt-2", "evt-3", "evt-4", "evt-5", "evt-6", "")),
    sequence: maybe(fc.oneof(fc.nat(12), fc.constantFrom(3.0, 2.5, -1, "4"))),
    scope: maybe(pick("pipeline", "step", "candidate")),
    data: maybe(
      fc.record(
        {
          text: maybe(text),
          type: maybe(pick("raw_thinking", "summary")),
          toolUseId: toolId,
          toolName: maybe(pick("ros_validate", "")),
          input: maybe(json),
          result: maybe(json),
          isError: maybe(fc.boolean()),
          provider: maybe(pick("dashscope")),
          inputTokens: maybe(fc.nat(100)),
        },
        { requiredKeys: [] },
      ),
    ),
    step: maybe(
      fc.record({ id: maybe(pick("plan", "generate", "")), runId: maybe(pick("step-plan-1", "step-generate-1")) }, { requiredKeys: [] }),
    ),
    candidate: maybe(fc.record({ id: maybe(pick("c1", "c2")), runId: maybe(pick("cand-run-1")) }, { requiredKeys: [] })),
    candidateStep: maybe(fc.record({ id: maybe(pick("draft", "preview")) }, { requiredKeys: [] })),
  },
  { requiredKeys: ["eventType"] },
);

const iacCode = fc.record({
  iacCodeSessionId: rare(pick("session-1", "session-2"), 4),
  thinking: rare(thinking, 4),
  tool: rare(tool, 3),
  usage: rare(usage, 6),
  assistantFinal: rare(fc.record({ complete: pick<unknown>(true, false) }), 8),
  input: rare(input, 15),
  pendingPermissions: rare(fc.array(input, { maxLength: 2 }), 25),
  pipeline: rare(envelope, 3),
  pipelineBatch: rare(fc.record({ events: fc.array(envelope, { maxLength: 3 }) }), 6),
});

/** Drops the keys fast-check left undefined: frames arrive as JSON, which has no undefined. */
const asJson = (value: unknown): Json => JSON.parse(JSON.stringify(value)) as Json;

const statusUpdate = fc
  .record({
    state: midState,
    message: maybe(message),
    iacCode: maybe(iacCode),
    extra: unknownKeys,
  })
  .map(({ state, message, iacCode, extra }) =>
    asJson({
      statusUpdate: {
        taskId: TASK_ID,
        contextId: CONTEXT_ID,
        status: { state, ...(message ? { message } : {}) },
        ...(iacCode ? { metadata: { iac_code: iacCode, other: extra } } : {}),
        ...extra,
      },
    }),
  );

const artifactUpdate = fc
  .record(
    {
      artifactId: maybe(pick("art-1", "art-2")),
      name: maybe(text),
      parts: fc.array(fc.oneof(fc.record({ text }), fc.record({ data: json })), { maxLength: 2 }),
      metadata: maybe(json),
    },
    { requiredKeys: ["parts"] },
  )
  .map((artifact) => asJson({ artifactUpdate: { taskId: TASK_ID, contextId: CONTEXT_ID, artifact } }));

const taskSnapshot = fc
  .record({
    state: midState,
    history: maybe(fc.array(message, { maxLength: 3 })),
    iacCode: maybe(iacCode),
  })
  .map(({ state, history, iacCode }) =>
    asJson({
      task: {
        id: TASK_ID,
        contextId: CONTEXT_ID,
        status: { state },
        ...(history ? { history } : {}),
        ...(iacCode ? { metadata: { iac_code: iacCode } } : {}),
      },
    }),
  );

const bareMessage = message.map((body) => asJson({ message: body }));
/** Something that is no StreamResponse at all. */
const stranger = fc.dictionary(fc.string({ maxLength: 8 }), json, { maxKeys: 3 }).map(asJson);

export const frame: fc.Arbitrary<JsonRpcResult> = fc.oneof(
  { weight: 20, arbitrary: statusUpdate },
  { weight: 2, arbitrary: artifactUpdate },
  { weight: 1, arbitrary: taskSnapshot },
  { weight: 1, arbitrary: bareMessage },
  { weight: 1, arbitrary: stranger },
);

/** How the stream ends, after its frames (a settled state among the frames may have ended the run already). */
export type Ending = { kind: "state"; state: string } | { kind: "stops" } | { kind: "fails"; error: unknown };

export const ending: fc.Arbitrary<Ending> = fc.oneof(
  fc.constantFrom(...STATES).map((state): Ending => ({ kind: "state", state: `TASK_STATE_${state}` })),
  fc.constant<Ending>({ kind: "stops" }),
  fc
    .constantFrom<unknown>(
      new AguiError("A2A_UNAVAILABLE"),
      new Error("socket hang up"),
      executionFailed({ code: -32603, message: "kernel exploded", data: { code: "SESSION_BACKUP_NOT_READY", retryable: true } }),
      "a thrown string",
    )
    .map((error): Ending => ({ kind: "fails", error })),
);

/** The whole stream: the Task first (as a kernel sends it), frames, then the ending. */
export const kernelStream = fc.record({
  leadingTask: fc.boolean(),
  frames: fc.array(frame, { maxLength: 30 }),
  ending,
});

/** Where the run starts: a resumed execution may carry a cursor, open steps and text the client has. */
export const chainOptions: fc.Arbitrary<ChainOptions> = fc
  .record({
    pipelineSequence: fc.nat(8),
    pipelineOpenSteps: fc.subarray(["step:plan", "candidate:c1:draft", "step:generate"]),
    textSnapshotDigests: fc.subarray(["hello", "hel", "🙂 multi-byte"]).map((texts) => texts.map(textDigest)),
    interruptsAsTools: fc.boolean(),
    isAnsweredIds: fc.subarray(["input-a", "input-b"]),
    failPersistence: fc.oneof({ weight: 9, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
  })
  .map(({ isAnsweredIds, ...options }) => ({ ...options, isAnswered: (id: string) => isAnsweredIds.includes(id) }));

export function endingFrame(end: Ending): JsonRpcResult | undefined {
  return end.kind === "state" ? { statusUpdate: { taskId: TASK_ID, contextId: CONTEXT_ID, status: { state: end.state } } } : undefined;
}
