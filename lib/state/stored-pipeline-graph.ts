/**
 * The pipeline graph a paused execution keeps (`ExecutionState.pipelineGraph`):
 * the thread status hubs forget a thread's status when its run ends, so a
 * view that attaches at the interrupt, in front of a kernel that replays
 * nothing, would otherwise learn only the step still open. Picked field by
 * field like the rest of the document (R-PER-3), and bounded.
 */
import type { CandidateNode, PipelineGraph, PipelineStepNode, StepNode } from "../model/pipeline-graph.js";

/**
 * A graph is small (a handful of steps), but its ids, titles and candidates
 * come from the kernel. Past this many characters of JSON the candidates'
 * own steps are dropped, then the candidates themselves; a graph still
 * larger is not kept at all, and a late view falls back to the open steps
 * the execution keeps anyway.
 */
export const MAX_STORED_GRAPH_CHARS = 32 * 1024;

function projectStepNode(node: StepNode): StepNode {
  if (node === null || typeof node !== "object") return node;
  return {
    key: node.key,
    id: node.id,
    type: node.type,
    title: node.title,
    index: node.index,
    status: node.status,
    attempt: node.attempt,
    stepRunId: node.stepRunId,
    startedAt: node.startedAt,
    finishedAt: node.finishedAt,
    durationMs: node.durationMs,
    error: node.error === null || typeof node.error !== "object" ? node.error : projectError(node.error),
  };
}

function projectError(error: NonNullable<StepNode["error"]>): NonNullable<StepNode["error"]> {
  return { ...(error.code !== undefined ? { code: error.code } : {}), ...(error.message !== undefined ? { message: error.message } : {}) };
}

const listOf = <T>(value: readonly T[], project: (item: T) => T): T[] => (Array.isArray(value) ? value.map(project) : (value as T[]));

function projectCandidate(candidate: CandidateNode): CandidateNode {
  if (candidate === null || typeof candidate !== "object") return candidate;
  return {
    id: candidate.id,
    runId: candidate.runId,
    index: candidate.index,
    name: candidate.name,
    status: candidate.status,
    selected: candidate.selected,
    steps: listOf(candidate.steps, projectStepNode),
  };
}

function projectPipelineStep(step: PipelineStepNode): PipelineStepNode {
  if (step === null || typeof step !== "object") return step;
  return {
    ...projectStepNode(step),
    selectedCandidateId: step.selectedCandidateId,
    candidates: listOf(step.candidates, projectCandidate),
  };
}

/** Exactly the fields of a graph, picked one by one; values of the wrong type pass through for the schema to reject. */
export function projectPipelineGraph(graph: PipelineGraph): PipelineGraph {
  if (graph === null || typeof graph !== "object") return graph;
  return {
    pipelineRunId: graph.pipelineRunId,
    name: graph.name,
    status: graph.status,
    steps: listOf(graph.steps, projectPipelineStep),
  };
}

const fits = (graph: PipelineGraph) => JSON.stringify(graph).length <= MAX_STORED_GRAPH_CHARS;

/**
 * The graph to keep with a paused execution: whole when it fits, with less of its candidates when not, else none.
 * None too for a graph with nothing drawn (a run that is no pipeline): there is nothing to show a late view.
 */
export function boundedPipelineGraph(graph: PipelineGraph): PipelineGraph | undefined {
  if (graph.pipelineRunId === null && graph.status === "idle" && graph.steps.length === 0) return undefined;
  const whole = projectPipelineGraph(graph);
  if (fits(whole)) return whole;
  const withoutCandidateSteps = {
    ...whole,
    steps: whole.steps.map((step) => ({ ...step, candidates: step.candidates.map((candidate) => ({ ...candidate, steps: [] })) })),
  };
  if (fits(withoutCandidateSteps)) return withoutCandidateSteps;
  const withoutCandidates = { ...whole, steps: whole.steps.map((step) => ({ ...step, candidates: [] })) };
  return fits(withoutCandidates) ? withoutCandidates : undefined;
}
