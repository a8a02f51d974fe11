/**
 * Pipeline mode end to end (R-ID-5, R-MAP-1..4, R-CUS-4/5): the demo
 * kernel's recorded pipeline fixtures through the real service.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { EventType, type AGUIEvent, type Interrupt } from "@ag-ui/core";
import { CUSTOM_EVENT_TYPES } from "../../lib/model/pipeline-event-types.js";
import { expectValidRun } from "../support/agui.js";
import { postRun, runInput, startHarness, uniqueId, type Harness } from "../support/service.js";

type Input = ReturnType<typeof runInput>;
const ofType = <T extends AGUIEvent["type"]>(events: AGUIEvent[], type: T) =>
  events.filter((event): event is Extract<AGUIEvent, { type: T }> => event.type === type);
const pipelineEvents = (events: AGUIEvent[]) =>
  ofType(events, EventType.CUSTOM)
    .filter((event) => event.name === "iac-code.pipeline.v1")
    .map((event) => event.value as { eventId: string; eventType: string; sequence: number });
const pipelineRun = (fixture: string) => runInput(fixture, {}, { runMode: "pipeline", pipelineName: "demo" });
const interruptOf = (events: AGUIEvent[]) => (events.at(-1) as { outcome: { type: string; interrupts: Interrupt[] } }).outcome;

describe("pipeline mode over HTTP", () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness();
  });
  afterAll(() => harness.close());
  const post = (body: unknown) => postRun(harness.service.url, body);
  const resume = (first: Input, entries: unknown[]) => ({ ...first, runId: uniqueId("run"), resume: entries });

  it("maps a multi-step pipeline with two parallel candidates: balanced steps, separate messages, CUSTOM for the allowlist only", async () => {
    const input = pipelineRun("pipeline");
    const { events } = await post(input);

    await expectValidRun(events);
    expect(events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });

    const started = ofType(events, EventType.STEP_STARTED).map((event) => event.stepName);
    const finished = ofType(events, EventType.STEP_FINISHED).map((event) => event.stepName);
    expect(started).toEqual(expect.arrayContaining(["plan", "generate"]));
    expect(started.filter((name) => name.startsWith("candidate:")).length).toBeGreaterThanOrEqual(2);
    expect([...finished].sort()).toEqual([...started].sort());

    // Pipeline messages are the execution's: a run that resumes it goes on in them.
    const { executionId } = ofType(events, EventType.CUSTOM).find((event) => event.name === "iac-code.session.v1")!.value as {
      executionId: string;
    };
    const messages = new Set(
      ofType(events, EventType.TEXT_MESSAGE_START)
        .map((event) => event.messageId)
        .filter((id) => id.startsWith(`${executionId}:pipeline-message:`)),
    );
    expect(messages.size).toBeGreaterThanOrEqual(3);

    const custom = pipelineEvents(events);
    expect(custom.length).toBeGreaterThan(0);
    for (const value of custom) expect(CUSTOM_EVENT_TYPES).toContain(value.eventType);
    expect(new Set(custom.map((value) => value.eventId)).size).toBe(custom.length);
    const types = new Set(custom.map((value) => value.eventType));
    for (const standard of [
      "text_delta",
      "thinking_delta",
      "tool_started",
      "tool_result",
      "usage",
      "message_started",
      "context_usage",
      "backup_committed",
    ]) {
      expect(types).not.toContain(standard);
    }
    expect((events.at(-1) as { usage?: unknown[] }).usage?.length).toBeGreaterThan(0);
  });

  it("closes an open step before an interrupt and reopens it right after RUN_STARTED of the resume run", async () => {
    const first = pipelineRun("pipeline-permission");
    const paused = await post(first);
    await expectValidRun(paused.events);
    const outcome = interruptOf(paused.events);
    expect(outcome.type).toBe("interrupt");
    const open = ofType(paused.events, EventType.STEP_STARTED).map((event) => event.stepName);
    expect(open).toContain("deploy");

    const { events } = await post(
      resume(first, [{ interruptId: outcome.interrupts[0]!.id, status: "resolved", payload: { decision: "allow_once" } }]),
    );
    await expectValidRun(events);
    expect(events[0]!.type).toBe(EventType.RUN_STARTED);
    // Right after the opening (RUN_STARTED, then the session event once the kernel accepted the answer).
    const afterOpening = events.slice(1).filter((event) => !(event.type === EventType.CUSTOM && event.name === "iac-code.session.v1"));
    expect(afterOpening[0]).toEqual({
      type: EventType.STEP_STARTED,
      stepName: "deploy",
      timestamp: expect.any(Number),
      metadata: { "iac-code": { step: { schemaVersion: 1, key: "step:deploy", stepId: "deploy", reopened: true } } },
    });
    expect(ofType(events, EventType.STEP_FINISHED).map((event) => event.stepName)).toContain("deploy");
    expect(events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });
  });

  it("finishes a failed step's span, reports it as CUSTOM step_failed, and ends the run with RUN_ERROR", async () => {
    const { events } = await post(pipelineRun("pipeline-failed-step"));
    await expectValidRun(events);
    expect(pipelineEvents(events).map((value) => value.eventType)).toContain("step_failed");
    expect(pipelineEvents(events).map((value) => value.eventType)).not.toContain("pipeline_failed");
    expect(events.at(-1)).toMatchObject({ type: EventType.RUN_ERROR, code: "A2A_EXECUTION_FAILED" });
  });

  it("streams cleanup progress as CUSTOM events", async () => {
    const { events } = await post(pipelineRun("pipeline-cleanup"));
    await expectValidRun(events);
    const types = pipelineEvents(events).map((value) => value.eventType);
    expect(types[0]).toBe("cleanup_started");
    expect(types).toContain("cleanup_progress");
    expect(types.at(-1)).toBe("cleanup_completed");
  });

  it("re-attaches after the kernel stream drops: one replacing ACTIVITY_SNAPSHOT, then the missed events, none twice", async () => {
    const { events } = await post(pipelineRun("pipeline-drop"));
    await expectValidRun(events);
    const snapshots = ofType(events, EventType.ACTIVITY_SNAPSHOT);
    expect(snapshots).toHaveLength(1);
    expect(snapshots[0]).toMatchObject({
      activityType: "iac-code.pipeline.v1",
      replace: true,
      messageId: expect.stringMatching(/^pipeline:/),
    });
    const custom = pipelineEvents(events);
    expect(new Set(custom.map((value) => value.eventId)).size).toBe(custom.length);
    const started = ofType(events, EventType.STEP_STARTED).map((event) => event.stepName);
    expect(new Set(started).size).toBe(started.length);
    expect(events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });
  });

  it("answers a sub-pipeline's permission out of band: SendMessage, then it follows the task to the end", async () => {
    const first = pipelineRun("pipeline-sideband");
    const paused = await post(first);
    await expectValidRun(paused.events);
    const outcome = interruptOf(paused.events);
    expect(outcome.type).toBe("interrupt");
    const interrupt = outcome.interrupts[0]!;
    const { events } = await post(resume(first, [{ interruptId: interrupt.id, status: "resolved", payload: { decision: "allow_once" } }]));
    await expectValidRun(events);
    const sent = harness.kernel.received.filter((call) => call.method === "SendMessage").at(-1)!.params as {
      message: { messageId: string; parts: unknown[] };
    };
    expect(sent.message.messageId).toBe(`agui-resume-${interrupt.id}`);
    expect(events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });
  });
});
