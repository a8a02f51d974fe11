/**
 * An observer stream's pipeline graph (`pipelineGraph` of the thread
 * status, docs/pipeline-feed.md) kept current by the stream's own events:
 * the graph its status snapshot was taken with at attach, then every
 * pipeline event the stream shows folded in (`reducePipelineGraph`), each
 * change sent as a `STATE_DELTA` replacing `/pipelineGraph` right after the
 * event that made it. The status source's own changes to the key are left
 * out, so the graph a view draws always matches the events it has been
 * shown, whether the status comes from a run in this process, from
 * another instance, or from nobody (an execution paused or ended, whose
 * status no run feeds: the recovery snapshot and the replayed events draw
 * it then).
 *
 *   SNAPSHOT{pipelineGraph: g0} STEP_STARTED(plan)
 *     → SNAPSHOT{pipelineGraph: g0} STEP_STARTED(plan) DELTA[replace /pipelineGraph g1]
 */
import { EventType, type AGUIEvent, type JsonPatchOperation } from "@ag-ui/core";
import { defer, type OperatorFunction } from "rxjs";
import { emitEach } from "./emit-each.js";
import { canonicalJson, isJsonObject } from "../lib/model/json.js";
import { emptyPipelineGraph, reducePipelineGraph, type PipelineGraph } from "../lib/model/pipeline-graph.js";

const GRAPH_PATH = "/pipelineGraph";

const isEvent = (item: unknown): item is AGUIEvent => typeof item === "object" && item !== null && "type" in item;

export function keepPipelineGraphCurrent<T>(): OperatorFunction<T, T | AGUIEvent> {
  return (source) =>
    defer(() => {
      let graph: PipelineGraph = emptyPipelineGraph();
      /** The graph as the view has it (canonical JSON), once a status snapshot has shown one. */
      let shown: string | undefined;

      const fromSnapshot = (event: Extract<AGUIEvent, { type: EventType.STATE_SNAPSHOT }>): AGUIEvent => {
        const status = event.snapshot as unknown;
        if (!isJsonObject(status) || !isJsonObject(status.pipelineGraph)) return event;
        // The first snapshot hands over the graph so far; the stream's own events keep it from then on.
        if (shown === undefined) graph = status.pipelineGraph as unknown as PipelineGraph;
        shown = canonicalJson(graph);
        return status.pipelineGraph === (graph as unknown) ? event : { ...event, snapshot: { ...status, pipelineGraph: graph } };
      };

      const withoutGraph = (event: Extract<AGUIEvent, { type: EventType.STATE_DELTA }>): AGUIEvent[] => {
        const delta = event.delta as JsonPatchOperation[];
        const kept = delta.filter((op) => op.path !== GRAPH_PATH);
        if (kept.length === delta.length) return [event];
        return kept.length === 0 ? [] : [{ ...event, delta: kept }];
      };

      const fold = (event: AGUIEvent): AGUIEvent[] => {
        const next = reducePipelineGraph(graph, event);
        if (next === graph) return [event];
        graph = next;
        if (shown === undefined) return [event];
        const text = canonicalJson(graph);
        if (text === shown) return [event];
        shown = text;
        const delta: AGUIEvent = {
          type: EventType.STATE_DELTA,
          delta: [{ op: "replace", path: GRAPH_PATH, value: graph }],
          ...(event.timestamp === undefined ? {} : { timestamp: event.timestamp }),
        };
        return [event, delta];
      };

      return source.pipe(
        emitEach((item: T): Array<T | AGUIEvent> => {
          if (!isEvent(item)) return [item];
          if (item.type === EventType.STATE_SNAPSHOT) return [fromSnapshot(item)];
          if (item.type === EventType.STATE_DELTA) return withoutGraph(item);
          return fold(item);
        }),
      );
    });
}
