/**
 * The thread's status read-model (R-SIB-6): a small, documented summary an
 * observer can show without replaying a run — whether a run is active, the
 * steps open now, the interrupts waiting, how far the pipeline got, and the
 * usage so far. `reduceThreadStatus` folds each AG-UI event of the thread's
 * runs into it; it is pure, so the hub that holds it and the observers that
 * read it stay simple.
 */
import { EventType, type AGUIEvent, type TokenUsage } from "@ag-ui/core";
import { emptyPipelineGraph, reducePipelineGraph, type PipelineGraph } from "./pipeline-graph.js";
import { stepFactsFrom } from "./step-facts.js";

export interface ThreadStatus {
  threadId: string;
  runActive: boolean;
  /** The run in progress or the last one. */
  runId: string | null;
  /** Step names open in the current run, in the order they opened. */
  currentSteps: string[];
  pendingInterrupts: Array<{ id: string; reason: string; kind: string | null }>;
  pipeline: { sequence: number; lastEventType: string | null };
  /** Usage of the last finished run. */
  usage: TokenUsage[];
  /**
   * The pipeline's steps and candidates and how each stands
   * (`pipeline-graph.ts`, docs/pipeline-feed.md). Kept across the thread's
   * runs: a pipeline goes on after a pause. A key of its own, so that the
   * frequent `pipeline` position changes do not resend it.
   */
  pipelineGraph: PipelineGraph;
}

export const initialThreadStatus = (threadId: string): ThreadStatus => ({
  threadId,
  runActive: false,
  runId: null,
  currentSteps: [],
  pendingInterrupts: [],
  pipeline: { sequence: 0, lastEventType: null },
  usage: [],
  pipelineGraph: emptyPipelineGraph(),
});

/**
 * A step event's envelope counts in how far the pipeline got, as a CUSTOM one does: an observer handed this status
 * has its effect in the graph, and takes no envelope up to it again (`threads/observe.ts`).
 */
function reachedSequence(status: ThreadStatus, event: AGUIEvent): ThreadStatus {
  const sequence = stepFactsFrom(event)?.sequence;
  if (sequence === undefined || Math.trunc(sequence) <= status.pipeline.sequence) return status;
  return { ...status, pipeline: { ...status.pipeline, sequence: Math.trunc(sequence) } };
}

export function reduceThreadStatus(status: ThreadStatus, event: AGUIEvent): ThreadStatus {
  const next = reduceRunStatus(status, event);
  const pipelineGraph = reducePipelineGraph(status.pipelineGraph, event);
  return pipelineGraph === status.pipelineGraph ? next : { ...next, pipelineGraph };
}

function reduceRunStatus(status: ThreadStatus, event: AGUIEvent): ThreadStatus {
  switch (event.type) {
    case EventType.RUN_STARTED:
      return { ...status, runActive: true, runId: event.runId, currentSteps: [], pendingInterrupts: [] };
    case EventType.STEP_STARTED: {
      const reached = reachedSequence(status, event);
      return status.currentSteps.includes(event.stepName)
        ? reached
        : { ...reached, currentSteps: [...status.currentSteps, event.stepName] };
    }
    case EventType.STEP_FINISHED:
      return { ...reachedSequence(status, event), currentSteps: status.currentSteps.filter((name) => name !== event.stepName) };
    case EventType.CUSTOM: {
      if (event.name !== "iac-code.pipeline.v1") return status;
      const value = event.value as { sequence?: unknown; eventType?: unknown };
      const sequence =
        typeof value.sequence === "number" ? Math.max(status.pipeline.sequence, Math.trunc(value.sequence)) : status.pipeline.sequence;
      const lastEventType = typeof value.eventType === "string" ? value.eventType : status.pipeline.lastEventType;
      return { ...status, pipeline: { sequence, lastEventType } };
    }
    case EventType.RUN_FINISHED: {
      const interrupts = event.outcome?.type === "interrupt" ? event.outcome.interrupts : [];
      return {
        ...status,
        runActive: false,
        currentSteps: [],
        pendingInterrupts: interrupts.map(({ id, reason, metadata }) => {
          const kind = (metadata as { kind?: unknown } | undefined)?.kind;
          return { id, reason, kind: typeof kind === "string" ? kind : null };
        }),
        usage: event.usage ?? status.usage,
      };
    }
    case EventType.RUN_ERROR:
      return { ...status, runActive: false, currentSteps: [], usage: event.usage ?? status.usage };
    default:
      return status;
  }
}
