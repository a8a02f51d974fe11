/**
 * The feed never goes backwards (docs/pipeline-feed.md, "The read-model"):
 * a view that attaches late is handed the graph so far, then may get the
 * kernel's recovery snapshot and a replay of envelopes it has in that graph
 * already, then the live events. Wherever it attaches and whatever is
 * replayed, each node of the graph it draws only moves on (a step within
 * one attempt, a candidate within one run of it, the pipeline), and it
 * ends with the graph of a view that watched from the start.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "@jest/globals";
import { EventType, type AGUIEvent } from "@ag-ui/core";
import fc from "fast-check";
import { from, lastValueFrom, toArray } from "rxjs";
import type { JsonRpcResult } from "../../../lib/a2a/client.js";
import { parseFixture } from "../../../lib/fixtures/fixture-format.js";
import { snapshotOf } from "../../../lib/kernel/pipeline-snapshot.js";
import { isJsonObject } from "../../../lib/model/json.js";
import { emptyPipelineGraph, reducePipelineGraph, type PipelineGraph } from "../../../lib/model/pipeline-graph.js";
import { stepFactsFrom, stepMetadata } from "../../../lib/model/step-facts.js";
import { FIXTURES_DIR } from "../../../lib/paths.js";
import { framesToSignals, projectionChain } from "../../../lib/testing/projection-chain.js";

const FIXTURES = ["pipeline", "pipeline-failed-step", "pipeline-permission"];

function firstTurnFrames(name: string): JsonRpcResult[] {
  const [turn] = parseFixture(readFileSync(path.join(FIXTURES_DIR, `${name}.jsonl`), "utf8"), name);
  return turn!.lines.flatMap((line) =>
    line.frame === undefined
      ? []
      : [JSON.parse(JSON.stringify(line.frame).replaceAll("${taskId}", "task-1").replaceAll("${contextId}", "context-1")) as JsonRpcResult],
  );
}

/** A recorded fixture's first turn through the run's chain: the AG-UI events a view that watched from the start gets. */
async function fixtureEvents(name: string): Promise<AGUIEvent[]> {
  const items = await lastValueFrom(from(firstTurnFrames(name)).pipe(framesToSignals(), projectionChain(), toArray()));
  return items.filter((item): item is AGUIEvent => typeof item === "object" && "type" in item);
}

/** The kernel's envelopes of the first turn, in order. */
function fixtureEnvelopes(name: string): Array<Record<string, unknown>> {
  return firstTurnFrames(name).flatMap((frame) => {
    const iacCode = (frame as { statusUpdate?: { metadata?: { iac_code?: Record<string, unknown> } } }).statusUpdate?.metadata?.iac_code;
    if (iacCode === undefined) return [];
    const batch = isJsonObject(iacCode.pipelineBatch) && Array.isArray(iacCode.pipelineBatch.events) ? iacCode.pipelineBatch.events : [];
    return [...batch, ...(isJsonObject(iacCode.pipeline) ? [iacCode.pipeline] : [])] as Array<Record<string, unknown>>;
  });
}

/** The kernel's recovery snapshot when it had published the envelopes up to `sequence`. */
function recoveryAt(name: string, sequence: number): AGUIEvent {
  const envelopes = fixtureEnvelopes(name).filter((envelope) => Number(envelope.sequence) <= sequence);
  const snapshot = snapshotOf(envelopes, {
    taskId: "task-1",
    contextId: "context-1",
    pendingInput: undefined,
    pendingPermissions: undefined,
    snapshotVersion: 1,
  });
  return {
    type: EventType.ACTIVITY_SNAPSHOT,
    messageId: "pipeline:prun",
    activityType: "iac-code.pipeline.v1",
    content: { schemaVersion: 1, pipelineRunId: "prun", snapshot },
  };
}

/** The highest kernel sequence among `events`. */
function sequenceReached(events: readonly AGUIEvent[]): number {
  let highest = 0;
  for (const event of events) {
    const sequence =
      event.type === EventType.CUSTOM
        ? (event.value as { sequence?: number }).sequence
        : event.type === EventType.STEP_STARTED || event.type === EventType.STEP_FINISHED
          ? stepFactsFrom(event)?.sequence
          : undefined;
    if (sequence !== undefined) highest = Math.max(highest, sequence);
  }
  return highest;
}

const STEP_RANK: Record<string, number> = { pending: 0, running: 1, done: 2, failed: 2, skipped: 2 };
const CANDIDATE_RANK: Record<string, number> = { running: 0, done: 1, failed: 1 };
const PIPELINE_RANK: Record<string, number> = { idle: 0, running: 1, completed: 2, failed: 2 };

/** Where each node of `graph` stands, by a name that is its own: how far along, and within what (attempt, run). */
function standings(graph: PipelineGraph): Map<string, { within: string; rank: number; status: string }> {
  const standing = new Map<string, { within: string; rank: number; status: string }>([
    ["pipeline", { within: graph.pipelineRunId ?? "", rank: PIPELINE_RANK[graph.status]!, status: graph.status }],
  ]);
  for (const step of graph.steps) {
    for (const node of [step, ...step.candidates.flatMap((candidate) => candidate.steps)])
      standing.set(node.key, { within: String(node.attempt ?? 0), rank: STEP_RANK[node.status]!, status: node.status });
    for (const candidate of step.candidates)
      standing.set(`candidate ${candidate.id}`, {
        within: candidate.runId ?? "",
        rank: CANDIDATE_RANK[candidate.status]!,
        status: candidate.status,
      });
  }
  return standing;
}

/** Each time a node moved back within one attempt or run while `events` were folded on `seed`: empty when the feed is monotonic. */
function stepsBack(seed: PipelineGraph, events: readonly AGUIEvent[]): string[] {
  const back: string[] = [];
  let graph = seed;
  let shown = standings(graph);
  for (const [index, event] of events.entries()) {
    graph = reducePipelineGraph(graph, event);
    const now = standings(graph);
    for (const [name, was] of shown) {
      const is = now.get(name);
      if (is !== undefined && is.within === was.within && is.rank < was.rank)
        back.push(`${name}: ${was.status} → ${is.status} at event ${index} (${event.type})`);
    }
    shown = now;
  }
  return back;
}

describe("the graph a late view draws", () => {
  it.each(FIXTURES)("only moves on, wherever it attaches and whatever is replayed (%s)", async (name) => {
    const events = await fixtureEvents(name);
    const whole = events.reduce(reducePipelineGraph, emptyPipelineGraph());
    const attach = fc.integer({ min: 0, max: events.length }).chain((handedAt) =>
      fc.record({
        handedAt: fc.constant(handedAt),
        replayFrom: fc.integer({ min: 0, max: handedAt }),
        snapshotAt: fc.option(fc.integer({ min: handedAt, max: events.length }), { nil: undefined }),
      }),
    );
    fc.assert(
      fc.property(attach, ({ handedAt, replayFrom, snapshotAt }) => {
        // Handed the graph of what happened before it attached; then the kernel's snapshot (as new as the handed graph
        // or newer), the replay of envelopes from an older point, and the live events after those.
        const handed = events.slice(0, handedAt).reduce(reducePipelineGraph, emptyPipelineGraph());
        const recovery = snapshotAt === undefined ? [] : [recoveryAt(name, sequenceReached(events.slice(0, snapshotAt)))];
        const stream = [...recovery, ...events.slice(replayFrom)];
        expect(stepsBack(handed, stream)).toEqual([]);
        const ended = stream.reduce(reducePipelineGraph, handed);
        expect(ended.steps.map((step) => [step.key, step.status, step.candidates.map((c) => [c.id, c.status, c.selected])])).toEqual(
          whole.steps.map((step) => [step.key, step.status, step.candidates.map((c) => [c.id, c.status, c.selected])]),
        );
        expect(ended.status).toBe(whole.status);
        if (snapshotAt === undefined) expect(ended).toEqual(whole);
      }),
      { numRuns: 300 },
    );
  });

  it("keeps a step done when a replayed start of the same attempt comes after its finish", () => {
    const span = (type: EventType.STEP_STARTED | EventType.STEP_FINISHED, facts: Record<string, unknown>): AGUIEvent =>
      ({ type, stepName: "plan", metadata: stepMetadata({ schemaVersion: 1, key: "step:plan", stepId: "plan", ...facts }) }) as AGUIEvent;
    const start = span(EventType.STEP_STARTED, { attempt: 1, stepRunId: "step-plan-1", startedAt: "2026-03-12T08:14:05.170Z" });
    const finish = span(EventType.STEP_FINISHED, {
      attempt: 1,
      stepRunId: "step-plan-1",
      finishedAt: "2026-03-12T08:14:05.625Z",
      outcome: "completed",
    });
    const done = [start, finish].reduce(reducePipelineGraph, emptyPipelineGraph());
    expect(done.steps[0]).toMatchObject({ status: "done", durationMs: 455 });
    expect(reducePipelineGraph(done, start).steps[0]).toEqual(done.steps[0]);
    // A start of an older attempt is history too.
    const retried = reducePipelineGraph(done, span(EventType.STEP_STARTED, { attempt: 2, stepRunId: "step-plan-2" }));
    expect(reducePipelineGraph(retried, finish)).toEqual(retried);
  });
});
