import { describe, expect, it } from "@jest/globals";
import { EventType, type AGUIEvent } from "@ag-ui/core";
import { runningStepFacts } from "../../../lib/model/open-steps.js";
import { emptyPipelineGraph, reducePipelineGraph } from "../../../lib/model/pipeline-graph.js";
import { stepMetadata, type StepFacts } from "../../../lib/model/step-facts.js";

const span = (type: EventType.STEP_STARTED | EventType.STEP_FINISHED, facts: StepFacts): AGUIEvent =>
  ({ type, stepName: facts.key.replace(/^step:/, ""), metadata: stepMetadata(facts) }) as AGUIEvent;

describe("runningStepFacts", () => {
  it("names every step and candidate step a graph shows running, with what it knows of each, as reopened spans", () => {
    const generate: StepFacts = {
      schemaVersion: 1,
      key: "step:generate",
      stepId: "generate",
      stepRunId: "step-generate-1",
      type: "parallel_candidates",
      title: "Generate",
      index: 1,
      attempt: 1,
      startedAt: "2026-03-12T08:14:05.655Z",
    };
    const draft: StepFacts = {
      schemaVersion: 1,
      key: "candidate:subp-0:draft",
      stepId: "draft",
      stepRunId: "cstep-subp-0-draft-1",
      index: 0,
      attempt: 1,
      parent: {
        stepId: "generate",
        stepRunId: "step-generate-1",
        candidateId: "subp-0",
        candidateRunId: "candidate-subp-0-0-1",
        candidateIndex: 0,
        candidateName: "A",
      },
      startedAt: "2026-03-12T08:14:05.698Z",
    };
    const plan: StepFacts = { schemaVersion: 1, key: "step:plan", stepId: "plan", attempt: 1, startedAt: "2026-03-12T08:14:05.170Z" };
    const graph = [
      span(EventType.STEP_STARTED, plan),
      span(EventType.STEP_FINISHED, { ...plan, finishedAt: "2026-03-12T08:14:05.625Z", outcome: "completed" }),
      span(EventType.STEP_STARTED, generate),
      span(EventType.STEP_STARTED, draft),
    ].reduce(reducePipelineGraph, emptyPipelineGraph());

    expect(runningStepFacts(graph)).toEqual([
      { ...generate, reopened: true },
      { ...draft, reopened: true },
    ]);
    // Folded back in, they change nothing a view draws.
    expect(
      runningStepFacts(graph)
        .map((facts) => span(EventType.STEP_STARTED, facts))
        .reduce(reducePipelineGraph, graph),
    ).toEqual(graph);
  });
});
