/**
 * What a view wired to an observer's read-model draws: the `pipelineGraph`
 * of each STATE_SNAPSHOT and STATE_DELTA it is sent, in order. A feed that
 * never goes backwards shows no node in an earlier state than one it
 * showed (docs/pipeline-feed.md, "The read-model").
 */
import { EventType, type AGUIEvent } from "@ag-ui/core";
import type { PipelineGraph } from "../../lib/model/pipeline-graph.js";

const STEP_RANK: Record<string, number> = { pending: 0, running: 1, done: 2, failed: 2, skipped: 2 };

/** Each graph the view is sent, in order. */
export function graphsShown(events: readonly AGUIEvent[]): PipelineGraph[] {
  return events.flatMap((event) => {
    if (event.type === EventType.STATE_SNAPSHOT) {
      const graph = (event.snapshot as { pipelineGraph?: PipelineGraph }).pipelineGraph;
      return graph === undefined ? [] : [graph];
    }
    if (event.type !== EventType.STATE_DELTA) return [];
    return (event.delta as Array<{ path: string; value?: PipelineGraph }>).flatMap((op) =>
      op.path === "/pipelineGraph" && op.value !== undefined ? [op.value] : [],
    );
  });
}

/** Every time a step went back to an earlier state within one attempt on the way: empty for a monotonic feed. */
export function stepsGoneBack(events: readonly AGUIEvent[]): string[] {
  const shown = new Map<string, { attempt: number | null; status: string }>();
  const back: string[] = [];
  for (const graph of graphsShown(events)) {
    for (const step of graph.steps) {
      for (const node of [step, ...step.candidates.flatMap((candidate) => candidate.steps)]) {
        const was = shown.get(node.key);
        if (was !== undefined && was.attempt === node.attempt && STEP_RANK[node.status]! < STEP_RANK[was.status]!)
          back.push(`${node.key}: ${was.status} → ${node.status}`);
        shown.set(node.key, { attempt: node.attempt, status: node.status });
      }
    }
  }
  return back;
}
