/**
 * The steps a pipeline graph shows running, as the facts a reopened span
 * carries (docs/pipeline-feed.md): what an observer's status snapshot
 * knows of the steps open as it attaches. Its stream reopens them right
 * away, so the finish of a step that started before the observer came is
 * the end of a span it has (`project-steps.ts`), with the step's start,
 * attempt and candidate as the run's own stream has them.
 */
import type { CandidateNode, PipelineGraph, PipelineStepNode, StepNode } from "./pipeline-graph.js";
import type { StepFacts, StepParent } from "./step-facts.js";

/** A node's facts, absent ones left out as the events leave them out. */
function factsOf(node: StepNode, parent?: StepParent): StepFacts {
  return {
    schemaVersion: 1,
    key: node.key,
    stepId: node.id,
    ...(node.stepRunId === null ? {} : { stepRunId: node.stepRunId }),
    ...(node.type === null ? {} : { type: node.type }),
    ...(node.title === null ? {} : { title: node.title }),
    ...(node.index === null ? {} : { index: node.index }),
    ...(node.attempt === null ? {} : { attempt: node.attempt }),
    ...(parent === undefined ? {} : { parent }),
    ...(node.startedAt === null ? {} : { startedAt: node.startedAt }),
    reopened: true,
  };
}

function parentOf(step: PipelineStepNode, candidate: CandidateNode): StepParent {
  return {
    stepId: step.id,
    ...(step.stepRunId === null ? {} : { stepRunId: step.stepRunId }),
    candidateId: candidate.id,
    ...(candidate.runId === null ? {} : { candidateRunId: candidate.runId }),
    ...(candidate.index === null ? {} : { candidateIndex: candidate.index }),
    ...(candidate.name === null ? {} : { candidateName: candidate.name }),
  };
}

/** Every step and candidate step `graph` shows running, in plan order. */
export function runningStepFacts(graph: PipelineGraph): StepFacts[] {
  return graph.steps.flatMap((step) => [
    ...(step.status === "running" ? [factsOf(step)] : []),
    ...step.candidates.flatMap((candidate) =>
      candidate.steps.filter((inner) => inner.status === "running").map((inner) => factsOf(inner, parentOf(step, candidate))),
    ),
  ]);
}
