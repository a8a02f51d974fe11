import { describe, expect, it } from "@jest/globals";
import { EventType, type AGUIEvent } from "@ag-ui/core";
import { emptyPipelineGraph } from "../../../lib/model/pipeline-graph.js";
import { keyOnlyFacts, stepMetadata } from "../../../lib/model/step-facts.js";
import { initialThreadStatus, reduceThreadStatus } from "../../../lib/model/thread-status.js";
import { toStateEvents, topLevelPatch } from "../../../operators/to-state-events.js";
import { marbles } from "../../support/marbles.js";

const fold = (events: AGUIEvent[]) => events.reduce(reduceThreadStatus, initialThreadStatus("t"));

describe("reduceThreadStatus", () => {
  it("counts a step event's kernel sequence in how far the pipeline got, as a CUSTOM envelope's", () => {
    const facts = (sequence: number) => stepMetadata({ ...keyOnlyFacts("step:plan"), sequence });
    const status = fold([
      { type: EventType.RUN_STARTED, threadId: "t", runId: "r1" },
      { type: EventType.CUSTOM, name: "iac-code.pipeline.v1", value: { sequence: 1.0, eventType: "pipeline_started" } },
      { type: EventType.STEP_STARTED, stepName: "plan", metadata: facts(2) },
      { type: EventType.STEP_FINISHED, stepName: "plan", metadata: facts(12) },
      // A reopened span knows no sequence, and an older one changes nothing.
      { type: EventType.STEP_STARTED, stepName: "plan", metadata: stepMetadata(keyOnlyFacts("step:plan")) },
      { type: EventType.STEP_FINISHED, stepName: "plan", metadata: facts(3) },
    ]);
    expect(status.pipeline).toEqual({ sequence: 12, lastEventType: "pipeline_started" });
  });

  it("follows a run: active, steps open and closed, pipeline position, then paused on interrupts with usage", () => {
    const status = fold([
      { type: EventType.RUN_STARTED, threadId: "t", runId: "r1" },
      { type: EventType.STEP_STARTED, stepName: "plan" },
      { type: EventType.STEP_STARTED, stepName: "deploy" },
      { type: EventType.STEP_FINISHED, stepName: "plan" },
      { type: EventType.CUSTOM, name: "iac-code.pipeline.v1", value: { sequence: 7.0, eventType: "stack_progress" } },
      { type: EventType.CUSTOM, name: "other", value: { sequence: 99 } },
    ]);
    expect(status).toEqual({
      threadId: "t",
      runActive: true,
      runId: "r1",
      currentSteps: ["deploy"],
      pendingInterrupts: [],
      pipeline: { sequence: 7, lastEventType: "stack_progress" },
      usage: [],
      pipelineGraph: emptyPipelineGraph(),
    });
    const paused = reduceThreadStatus(status, {
      type: EventType.RUN_FINISHED,
      threadId: "t",
      runId: "r1",
      usage: [{ inputTokens: 3 }],
      outcome: { type: "interrupt", interrupts: [{ id: "p1", reason: "tool_call", metadata: { kind: "permission" } }] },
    });
    expect(paused).toMatchObject({
      runActive: false,
      currentSteps: [],
      pendingInterrupts: [{ id: "p1", reason: "tool_call", kind: "permission" }],
      usage: [{ inputTokens: 3 }],
    });
  });

  it("ends the run on RUN_ERROR and clears waiting interrupts when the next run starts", () => {
    const errored = fold([
      { type: EventType.RUN_STARTED, threadId: "t", runId: "r" },
      { type: EventType.RUN_ERROR, message: "x" },
    ]);
    expect(errored.runActive).toBe(false);
    const resumed = reduceThreadStatus(
      { ...errored, pendingInterrupts: [{ id: "p", reason: "tool_call", kind: null }] },
      { type: EventType.RUN_STARTED, threadId: "t", runId: "r2" },
    );
    expect(resumed.pendingInterrupts).toEqual([]);
  });
});

describe("toStateEvents", () => {
  const s1 = { a: 1, b: { c: [1] } };
  const s2 = { a: 1, b: { c: [1, 2] }, d: "new" };
  it("sends a snapshot first, then only the changed keys as a JSON patch, and nothing for no change", () => {
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("abc", { a: s1, b: { ...s1 }, c: s2 }).pipe(toStateEvents())).toBe("a-c", {
        a: { type: EventType.STATE_SNAPSHOT, snapshot: s1 },
        c: {
          type: EventType.STATE_DELTA,
          delta: [
            { op: "replace", path: "/b", value: { c: [1, 2] } },
            { op: "add", path: "/d", value: "new" },
          ],
        },
      });
    });
  });

  it("removes keys that went away and escapes JSON Pointer characters", () => {
    expect(topLevelPatch({ "a/b": 1, "c~d": 2 }, { "c~d": 3 })).toEqual([
      { op: "remove", path: "/a~1b" },
      { op: "replace", path: "/c~0d", value: 3 },
    ]);
  });
});
