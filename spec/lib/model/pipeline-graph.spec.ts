import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "@jest/globals";
import { EventType, type AGUIEvent } from "@ag-ui/core";
import { from, lastValueFrom, toArray } from "rxjs";
import type { JsonRpcResult } from "../../../lib/a2a/client.js";
import { parseFixture } from "../../../lib/fixtures/fixture-format.js";
import { snapshotOf } from "../../../lib/kernel/pipeline-snapshot.js";
import { isJsonObject } from "../../../lib/model/json.js";
import { emptyPipelineGraph, reducePipelineGraph, type PipelineGraph } from "../../../lib/model/pipeline-graph.js";
import { keyOnlyFacts, stepMetadata } from "../../../lib/model/step-facts.js";
import { FIXTURES_DIR } from "../../../lib/paths.js";
import { framesToSignals, projectionChain } from "../../../lib/testing/projection-chain.js";

/** A recorded fixture's first turn, as the kernel sends it, through the run's chain: the AG-UI events a client gets. */
async function fixtureEvents(name: string): Promise<AGUIEvent[]> {
  const [turn] = parseFixture(readFileSync(path.join(FIXTURES_DIR, `${name}.jsonl`), "utf8"), name);
  const frames = turn!.lines.flatMap((line) =>
    line.frame === undefined
      ? []
      : [JSON.parse(JSON.stringify(line.frame).replaceAll("${taskId}", "task-1").replaceAll("${contextId}", "context-1")) as JsonRpcResult],
  );
  const items = await lastValueFrom(from(frames).pipe(framesToSignals(), projectionChain(), toArray()));
  return items.filter((item): item is AGUIEvent => typeof item === "object" && "type" in item);
}

const fold = (events: readonly AGUIEvent[], seed: PipelineGraph = emptyPipelineGraph()) => events.reduce(reducePipelineGraph, seed);

/** The kernel's pipeline envelopes of a recorded fixture's first turn, in order. */
function fixtureEnvelopes(name: string): Array<Record<string, unknown>> {
  const [turn] = parseFixture(readFileSync(path.join(FIXTURES_DIR, `${name}.jsonl`), "utf8"), name);
  return turn!.lines.flatMap((line) => {
    const iacCode = (line.frame as { statusUpdate?: { metadata?: { iac_code?: Record<string, unknown> } } } | undefined)?.statusUpdate
      ?.metadata?.iac_code;
    if (iacCode === undefined) return [];
    const batch = isJsonObject(iacCode.pipelineBatch) && Array.isArray(iacCode.pipelineBatch.events) ? iacCode.pipelineBatch.events : [];
    return [...batch, ...(isJsonObject(iacCode.pipeline) ? [iacCode.pipeline] : [])] as Array<Record<string, unknown>>;
  });
}

/** The kernel's recovery snapshot as the run's stream carries it (contract §6). */
const recoveryEvent = (snapshot: Record<string, unknown>): AGUIEvent => ({
  type: EventType.ACTIVITY_SNAPSHOT,
  messageId: "pipeline:prun",
  activityType: "iac-code.pipeline.v1",
  content: { schemaVersion: 1, pipelineRunId: "prun", snapshot },
});

/** What a drawing shows of a graph: each node's id and status, candidates side by side. */
const drawing = (graph: PipelineGraph) => ({
  status: graph.status,
  steps: graph.steps.map((step) => ({
    id: step.id,
    status: step.status,
    candidates: step.candidates.map((candidate) => ({
      id: candidate.id,
      status: candidate.status,
      selected: candidate.selected,
      steps: candidate.steps.map((inner) => [inner.id, inner.status]),
    })),
  })),
});

describe("reducePipelineGraph", () => {
  it("folds the recorded pipeline run into its graph: two steps done, two candidates side by side, B selected", async () => {
    const graph = fold(await fixtureEvents("pipeline"));
    expect(drawing(graph)).toEqual({
      status: "completed",
      steps: [
        { id: "plan", status: "done", candidates: [] },
        {
          id: "generate",
          status: "done",
          candidates: [
            { id: "subp-generate-0", status: "done", selected: false, steps: [["draft", "done"]] },
            { id: "subp-generate-1", status: "done", selected: true, steps: [["draft", "done"]] },
          ],
        },
      ],
    });
    expect(graph).toMatchObject({ pipelineRunId: "prun-task-1", name: "ros-stack-design" });
    expect(graph.steps[0]).toMatchObject({
      key: "step:plan",
      type: "agent",
      title: "Plan the stack",
      index: 0,
      attempt: 1,
      stepRunId: "step-plan-1",
      startedAt: "2026-03-12T08:14:05.170Z",
      finishedAt: "2026-03-12T08:14:05.625Z",
      // finishedAt − startedAt, the one duration rule (the kernel's data.durationMs of the fixture says 1840).
      durationMs: 455,
    });
    expect(graph.steps[1]).toMatchObject({ type: "parallel_candidates", selectedCandidateId: "subp-generate-1" });
    expect(graph.steps[1]!.candidates[1]).toMatchObject({
      name: "Candidate B: two zones behind an SLB",
      runId: "candidate-subp-generate-1-1-1",
    });
  });

  it("knows every step from pipeline_started as pending before it runs", async () => {
    const events = await fixtureEvents("pipeline");
    const started = events.findIndex(
      (event) => event.type === EventType.CUSTOM && (event.value as { eventType?: string }).eventType === "pipeline_started",
    );
    expect(drawing(fold(events.slice(0, started + 1)))).toEqual({
      status: "running",
      steps: [
        { id: "plan", status: "pending", candidates: [] },
        { id: "generate", status: "pending", candidates: [] },
      ],
    });
  });

  it("draws a failed step failed, with its error", async () => {
    const graph = fold(await fixtureEvents("pipeline-failed-step"));
    const failed = graph.steps.find((step) => step.status === "failed");
    expect(failed?.error).toMatchObject({ code: "TEMPLATE_INVALID" });
  });

  it("ends where it ended when the events are folded again on top of it (a late view replaying what it missed)", async () => {
    const events = await fixtureEvents("pipeline");
    const whole = fold(events);
    expect(fold(events, whole)).toEqual(whole);
    for (const cut of [5, 15, 30]) expect(fold(events.slice(cut - 5), fold(events.slice(0, cut)))).toEqual(whole);
  });

  it("draws from the kernel's recovery snapshot alone what the events drew", async () => {
    const snapshot = snapshotOf(fixtureEnvelopes("pipeline"), {
      taskId: "task-1",
      contextId: "context-1",
      pendingInput: undefined,
      pendingPermissions: undefined,
      snapshotVersion: 1,
    });
    const recovered = reducePipelineGraph(emptyPipelineGraph(), recoveryEvent(snapshot));
    expect(drawing(recovered)).toEqual(drawing(fold(await fixtureEvents("pipeline"))));
  });

  it("draws a resumed run's steps in plan order, not in the order they arrive", () => {
    // A run that answers the deployment's permission opens on the step that waited, reopened by its key alone,
    // and only then gets the recovery snapshot that knows the step before it: deploy arrives before validate.
    const snapshot = snapshotOf(fixtureEnvelopes("pipeline-permission"), {
      taskId: "task-1",
      contextId: "context-1",
      pendingInput: { inputId: "input-1" },
      pendingPermissions: undefined,
      snapshotVersion: 1,
    });
    const resumed = fold([
      { type: EventType.STEP_STARTED, stepName: "deploy", metadata: stepMetadata({ ...keyOnlyFacts("step:deploy"), reopened: true }) },
      recoveryEvent(snapshot),
    ]);
    expect(resumed.steps.map((step) => [step.id, step.index, step.status])).toEqual([
      ["validate", 0, "done"],
      ["deploy", 1, "running"],
    ]);
  });

  it("draws what was open when the pipeline was canceled as failed: it started and did not complete", () => {
    const canceled = fold([
      recoveryEvent({
        pipelineRunId: "prun",
        pipelineName: "ros-stack-design",
        status: "canceled",
        steps: [
          { id: "plan", index: 0, status: "completed" },
          {
            id: "generate",
            index: 1,
            status: "canceled",
            candidates: [{ id: "subp-generate-0", index: 0, status: "canceled", steps: [{ id: "draft", status: "canceled" }] }],
          },
          // Completed without running (a denied deployment): the only kind of step drawn skipped.
          { id: "deploy", index: 2, status: "skipped" },
        ],
      }),
    ]);
    expect(drawing(canceled)).toEqual({
      status: "failed",
      steps: [
        { id: "plan", status: "done", candidates: [] },
        {
          id: "generate",
          status: "failed",
          candidates: [{ id: "subp-generate-0", status: "failed", selected: false, steps: [["draft", "failed"]] }],
        },
        { id: "deploy", status: "skipped", candidates: [] },
      ],
    });
  });

  it("tells a retry from the failed attempt, and leaves a step the run closed as it was", () => {
    const span = (type: EventType.STEP_STARTED | EventType.STEP_FINISHED, facts: Record<string, unknown>): AGUIEvent =>
      ({ type, stepName: "plan", metadata: stepMetadata({ schemaVersion: 1, key: "step:plan", stepId: "plan", ...facts }) }) as AGUIEvent;
    const failed = fold([
      span(EventType.STEP_STARTED, { attempt: 1, stepRunId: "step-plan-1" }),
      span(EventType.STEP_FINISHED, { attempt: 1, stepRunId: "step-plan-1", outcome: "failed", error: { message: "boom" } }),
    ]);
    expect(failed.steps[0]).toMatchObject({ status: "failed", attempt: 1, error: { message: "boom" } });
    const retried = fold([span(EventType.STEP_STARTED, { attempt: 2, stepRunId: "step-plan-2" })], failed);
    expect(retried.steps[0]).toMatchObject({ status: "running", attempt: 2, stepRunId: "step-plan-2", error: null });
    const paused = fold([span(EventType.STEP_FINISHED, { attempt: 2, stepRunId: "step-plan-2", outcome: "run-ended" })], retried);
    expect(paused.steps[0]!.status).toBe("running");
    expect(fold([{ type: EventType.TEXT_MESSAGE_CONTENT, messageId: "m", delta: "x" }], paused)).toBe(paused);
  });
});
