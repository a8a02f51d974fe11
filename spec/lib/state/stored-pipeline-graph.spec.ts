import { describe, expect, it } from "@jest/globals";
import { emptyPipelineGraph } from "../../../lib/model/pipeline-graph.js";
import { boundedPipelineGraph, MAX_STORED_GRAPH_CHARS } from "../../../lib/state/stored-pipeline-graph.js";
import { endExecution, rotateExecution } from "../../../lib/threads/thread-transitions.js";
import { pausedGraph, threadState } from "./thread-state-fixture.js";

/** `pausedGraph()` with its first candidate's step titled `title` (the part a kernel could make large). */
function withCandidateTitle(title: string) {
  const graph = pausedGraph();
  const candidate = graph.steps[1]!.candidates[0]!;
  candidate.steps = [{ ...candidate.steps[0]!, title }];
  return graph;
}

describe("the pipeline graph a paused execution keeps", () => {
  it("is the whole graph when it fits", () => {
    expect(boundedPipelineGraph(pausedGraph())).toEqual(pausedGraph());
  });

  it("is none for a run that drew no graph (no pipeline)", () => {
    expect(boundedPipelineGraph(emptyPipelineGraph())).toBeUndefined();
  });

  it("drops the candidates' own steps first, then the candidates, and keeps no graph that is still too large", () => {
    const longTitle = "t".repeat(MAX_STORED_GRAPH_CHARS);
    const trimmed = boundedPipelineGraph(withCandidateTitle(longTitle))!;
    expect(trimmed.steps.map((step) => step.status)).toEqual(["done", "running"]);
    expect(trimmed.steps[1]!.candidates.map((candidate) => [candidate.id, candidate.status, candidate.steps])).toEqual([
      ["c1", "running", []],
      ["c2", "failed", []],
    ]);

    const manyCandidates = pausedGraph();
    const [first] = manyCandidates.steps[1]!.candidates;
    manyCandidates.steps[1]!.candidates = Array.from({ length: 400 }, (_, index) => ({ ...first!, id: `candidate-${index}`, index }));
    const withoutCandidates = boundedPipelineGraph(manyCandidates)!;
    expect(withoutCandidates.steps.map((step) => [step.id, step.status, step.candidates])).toEqual([
      ["validate", "done", []],
      ["generate", "running", []],
    ]);

    const graph = pausedGraph();
    graph.steps[0]!.title = longTitle;
    expect(boundedPipelineGraph(graph)).toBeUndefined();
  });

  it("goes when the execution ends or a new one starts", () => {
    const state = threadState("t");
    const paused = { ...state, execution: { ...state.execution, pipelineGraph: pausedGraph() } };
    expect(endExecution(paused).execution).not.toHaveProperty("pipelineGraph");
    expect(rotateExecution(paused, "exec-2", "ros-2").execution).not.toHaveProperty("pipelineGraph");
  });
});
