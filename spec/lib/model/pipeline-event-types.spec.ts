/**
 * Completeness (R-SIB-9): every pipeline eventType the contract names
 * (§4), written out here by hand rather than read from the registry, and
 * what a client gets for it once it has been through the operator chain.
 */
import { describe, expect, it } from "@jest/globals";
import { EventType, type AGUIEvent } from "@ag-ui/core";
import { concat, from, of, toArray, type Observable } from "rxjs";
import { AguiError } from "../../../lib/errors.js";
import { aggregateUsage } from "../../../operators/aggregate-usage.js";
import { closeSpans } from "../../../operators/close-spans.js";
import { dedupePipelineEvents } from "../../../operators/dedupe-pipeline-events.js";
import { finishRun } from "../../../operators/finish-run.js";
import type { PipelineEnvelope, RunItem } from "../../../lib/model/kernel-signal.js";
import { CUSTOM_EVENT_TYPES, KNOWN_EVENT_TYPES, dispositionOf } from "../../../lib/model/pipeline-event-types.js";
import { projectPipelineEvents } from "../../../operators/project-pipeline-events.js";
import { projectReasoning } from "../../../operators/project-reasoning.js";
import { projectSteps } from "../../../operators/project-steps.js";
import { projectText } from "../../../operators/project-text.js";
import { projectTools } from "../../../operators/project-tools.js";
import { expectValidRun } from "../../support/agui.js";

/** Contract §4, "Emitted by the kernel". */
const EMITTED_BY_KERNEL = [
  "pipeline_started",
  "pipeline_resumed",
  "pipeline_warning",
  "mcp_status",
  "backup_blocked",
  "backup_committed",
  "pipeline_completed",
  "pipeline_failed",
  "pipeline_canceled",
  "pipeline_handoff_ready",
  "step_started",
  "step_completed",
  "step_failed",
  "candidate_started",
  "candidate_completed",
  "candidate_failed",
  "candidate_step_started",
  "candidate_step_completed",
  "candidate_step_failed",
  "candidate_restart_requested",
  "rollback_completed",
  "input_required",
  "input_received",
  "interrupt_received",
  "interrupt_classified",
  "artifact_created",
  "message_started",
  "text_delta",
  "thinking_delta",
  "tool_started",
  "tool_result",
  "permission_requested",
  "permission_resolved",
  "message_tombstone",
  "candidate_detail_shown",
  "diagram_shown",
  "tool_progress",
  "stack_progress",
  "stack_instances_progress",
  "stack_current_changed",
  "context_usage",
  "context_compaction_started",
  "context_compacted",
  "context_compaction_failed",
  "cleanup_started",
  "cleanup_progress",
  "cleanup_completed",
  "cleanup_failed",
];

/** Contract §4, the CUSTOM `iac-code.pipeline.v1` allowlist. */
const ALLOWLIST = [
  "backup_blocked",
  "candidate_completed",
  "candidate_detail_shown",
  "candidate_failed",
  "candidate_interrupted",
  "candidate_restart_requested",
  "candidate_selected",
  "candidate_started",
  "candidate_step_failed",
  "cleanup_completed",
  "cleanup_failed",
  "cleanup_progress",
  "cleanup_started",
  "context_compacted",
  "context_compaction_failed",
  "context_compaction_started",
  "diagram_shown",
  "fields_marked_stale",
  "mcp_status",
  "pipeline_completed",
  "pipeline_error",
  "pipeline_resumed",
  "pipeline_started",
  "pipeline_warning",
  "rollback_completed",
  "rollback_triggered",
  "stack_current_changed",
  "stack_instances_progress",
  "stack_progress",
  "step_failed",
  "sub_pipeline_completed",
  "sub_pipeline_started",
  "sub_step_failed",
  "tool_progress",
];

/** Contract §3/§4, the standard mappings: what the projectors make of each (`usage` rides on RUN_FINISHED). */
const STANDARD: Record<string, EventType[]> = {
  text_delta: [EventType.TEXT_MESSAGE_START, EventType.TEXT_MESSAGE_CONTENT],
  thinking_delta: [EventType.REASONING_START, EventType.REASONING_MESSAGE_START, EventType.REASONING_MESSAGE_CONTENT],
  tool_started: [EventType.TOOL_CALL_START, EventType.TOOL_CALL_ARGS, EventType.TOOL_CALL_END],
  tool_result: [EventType.TOOL_CALL_RESULT],
  usage: [],
};

/** Contract §4, STEP spans. */
const STEP_STARTS = ["step_started", "candidate_step_started", "input_received"];
const STEP_FINISHES = ["step_completed", "step_failed", "candidate_step_completed", "candidate_step_failed"];

/** Named "suppressed" in contract §4; the rest of the kernel's names that map to nothing follow from the lists above. */
const NAMED_SUPPRESSED = [
  "message_started",
  "message_tombstone",
  "context_usage",
  "permission_requested",
  "permission_resolved",
  "backup_committed",
  "input_required",
  "artifact_created",
  "interrupt_received",
  "interrupt_classified",
  "pipeline_failed",
  "pipeline_canceled",
  "pipeline_handoff_ready",
];

const ALL = [...new Set([...EMITTED_BY_KERNEL, ...ALLOWLIST, ...Object.keys(STANDARD)])];
const SUPPRESSED = ALL.filter(
  (type) => !ALLOWLIST.includes(type) && !(type in STANDARD) && !STEP_STARTS.includes(type) && !STEP_FINISHES.includes(type),
);

/** One envelope carrying every field any mapping reads, so that only its eventType decides what comes out. */
const envelopeOf = (eventType: unknown, eventId: string, sequence: number): PipelineEnvelope => ({
  schemaVersion: "1.0",
  extensionUri: "urn:iac-code:a2a:pipeline-events:v1",
  eventId,
  sequence,
  eventType,
  scope: "candidate_step",
  pipelineRunId: "prun-1",
  taskId: "t1",
  contextId: "ctx",
  pipelineName: "demo",
  status: "working",
  step: { id: "generate", runId: "step-generate-1", attempt: 1 },
  candidate: { id: "c1", runId: "candidate-c1-0-1", index: 0, attempt: 1 },
  candidateStep: { id: "template", runId: "cstep-template-1", attempt: 1 },
  data: {
    text: "hello",
    type: "raw_thinking",
    toolUseId: "u1",
    toolName: "write_file",
    input: { path: "a.yaml" },
    isError: false,
    result: "ok",
    provider: "dashscope",
    model: "qwen",
    inputTokens: 10.0,
    outputTokens: 2.0,
    totalTokens: 12.0,
    cachedInputTokens: 0.0,
  },
});

const STEP_NAME = "candidate:c1:template";

/** The projection half of a run's pipe, in the order `runAgent` runs it, ending in RUN_FINISHED. */
function project(signals: RunItem[]): Observable<AGUIEvent> {
  return from(signals).pipe(
    dedupePipelineEvents({ cursor: 0 }),
    projectPipelineEvents({ threadId: "th", newToolId: () => "tool-gen" }),
    projectSteps({ durableOpen: [] }),
    projectText({ runId: "r1", newMessageId: () => "assistant-gen" }),
    projectReasoning({ runId: "r1" }),
    projectTools({ runId: "r1" }),
    aggregateUsage(),
    finishRun({ threadId: "th", runId: "r1", describe: (error: AguiError) => error.code }),
  );
}

/** What a client gets for one envelope of `eventType` (after the step_started that opens its step, for a finish). */
function clientEvents(eventType: unknown): { events: AGUIEvent[]; whole: AGUIEvent[] } {
  const opener = STEP_FINISHES.includes(eventType as string)
    ? [{ kind: "pipeline-event", recovered: false, envelope: envelopeOf("candidate_step_started", "evt-0", 1) } as RunItem]
    : [];
  const signals: RunItem[] = [
    ...opener,
    { kind: "pipeline-event", recovered: false, envelope: envelopeOf(eventType, "evt-1", 2) },
    { kind: "run-end", error: undefined, kernelSettled: true },
  ];
  let events: AGUIEvent[] = [];
  project(signals)
    .pipe(toArray())
    .subscribe((out) => (events = out));
  let whole: AGUIEvent[] = [];
  concat(of<AGUIEvent>({ type: EventType.RUN_STARTED, threadId: "th", runId: "r1" }), from(events))
    .pipe(closeSpans(), toArray())
    .subscribe((out) => (whole = out));
  return { events, whole };
}

const typesOf = (events: AGUIEvent[]) => events.map((event) => event.type);
const customValues = (events: AGUIEvent[]) =>
  events.flatMap((event) => (event.type === EventType.CUSTOM && event.name === "iac-code.pipeline.v1" ? [event.value] : []));

describe("the pipeline event registry", () => {
  it("allowlists exactly the contract's 34 names for CUSTOM", () => {
    expect(ALLOWLIST).toHaveLength(34);
    expect(new Set(ALLOWLIST).size).toBe(34);
    expect([...CUSTOM_EVENT_TYPES].sort()).toEqual([...ALLOWLIST].sort());
  });

  it("knows every name the contract lists, and no other", () => {
    expect([...KNOWN_EVENT_TYPES].sort()).toEqual([...ALL].sort());
  });

  it("suppresses every name the contract calls suppressed, pipeline_failed and pipeline_canceled among them", () => {
    expect(SUPPRESSED).toEqual(expect.arrayContaining(NAMED_SUPPRESSED));
    expect(SUPPRESSED).toEqual(expect.arrayContaining(["pipeline_failed", "pipeline_canceled"]));
    for (const type of SUPPRESSED) expect(dispositionOf(type)).toEqual({ kind: "suppressed" });
  });

  it("suppresses what it does not know, whatever its shape", () => {
    for (const type of ["brand_new_event", "TEXT_DELTA", "", 42, null, undefined, { eventType: "text_delta" }]) {
      expect(dispositionOf(type)).toEqual({ kind: "suppressed" });
    }
  });
});

describe("every contract eventType through the operator chain", () => {
  it.each(Object.entries(STANDARD))("maps %s to standard events only, never CUSTOM", async (type, expected) => {
    const { events, whole } = clientEvents(type);
    expect(typesOf(events)).toEqual([...expected, EventType.RUN_FINISHED]);
    if (type === "usage") {
      expect(events.at(-1)).toMatchObject({
        usage: [{ provider: "dashscope", model: "qwen", inputTokens: 10, outputTokens: 2, totalTokens: 12, cachedInputTokens: 0 }],
      });
    }
    await expectValidRun(whole);
  });

  it.each(STEP_STARTS)("opens a step span on %s", async (type) => {
    const { events, whole } = clientEvents(type);
    expect(events.slice(0, -1)).toEqual([
      {
        type: EventType.STEP_STARTED,
        stepName: STEP_NAME,
        metadata: { "iac-code": { step: expect.objectContaining({ key: STEP_NAME }) } },
      },
    ]);
    await expectValidRun(whole);
  });

  it.each(STEP_FINISHES)("finishes the open step span on %s, with CUSTOM only if allowlisted", async (type) => {
    const { events, whole } = clientEvents(type);
    const custom = ALLOWLIST.includes(type) ? [EventType.CUSTOM] : [];
    expect(typesOf(events)).toEqual([EventType.STEP_STARTED, EventType.STEP_FINISHED, ...custom, EventType.RUN_FINISHED]);
    expect(events[1]).toEqual({
      type: EventType.STEP_FINISHED,
      stepName: STEP_NAME,
      metadata: {
        "iac-code": { step: expect.objectContaining({ key: STEP_NAME, outcome: type.endsWith("failed") ? "failed" : "completed" }) },
      },
    });
    await expectValidRun(whole);
  });

  it.each(ALLOWLIST.filter((type) => !STEP_FINISHES.includes(type)))(
    "sends %s as CUSTOM iac-code.pipeline.v1 with the envelope verbatim, and nothing else",
    async (type) => {
      const { events, whole } = clientEvents(type);
      expect(typesOf(events)).toEqual([EventType.CUSTOM, EventType.RUN_FINISHED]);
      expect(customValues(events)).toEqual([envelopeOf(type, "evt-1", 2)]);
      await expectValidRun(whole);
    },
  );

  it.each(SUPPRESSED)("sends nothing for %s", async (type) => {
    const { events, whole } = clientEvents(type);
    expect(typesOf(events)).toEqual([EventType.RUN_FINISHED]);
    await expectValidRun(whole);
  });

  it.each([
    ["an unknown name", "brand_new_event"],
    ["a number", 42],
    ["no eventType", undefined],
  ])("sends nothing for %s, and does not throw", async (_label, type) => {
    const { events, whole } = clientEvents(type);
    expect(typesOf(events)).toEqual([EventType.RUN_FINISHED]);
    await expectValidRun(whole);
  });
});
