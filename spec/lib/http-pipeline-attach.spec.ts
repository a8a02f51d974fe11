/**
 * Late attach (docs/pipeline-feed.md, "The read-model"): observers that
 * attach at several points of the recorded `pipeline` run, through the real
 * service, end with the graph an observer that watched from the start has,
 * and the one the run's own events draw. The kernel holds the run at each
 * point until the observer attached there is subscribed, so no point is a
 * matter of timing.
 */
import os from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { EventType, type AGUIEvent, type JsonPatchOperation } from "@ag-ui/core";
import type { HoldLine } from "../../lib/kernel/replay-executor.js";
import { emptyPipelineGraph, reducePipelineGraph, type PipelineGraph } from "../../lib/model/pipeline-graph.js";
import { expectValidRun } from "../support/agui.js";
import { stepsGoneBack } from "../support/graph-views.js";
import { decodeEvents } from "../support/event-streams.js";
import { postRun, runInput, startHarness, waitFor, type Harness, type RunResult } from "../support/service.js";

const pipelineProps = { schemaVersion: 1, rosInvocationId: "ros-1", cwd: os.tmpdir(), runMode: "pipeline", pipelineName: "demo" };

/** The kernel lines an observer attaches before: right after the session is known, then a quarter, half and three quarters in. */
const ATTACH_BEFORE_LINES = [2, 8, 16, 24];

/** A promise with its resolve at hand. */
function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

/** The thread status a view holds at the end of an observer stream: its snapshot with every delta applied (top-level keys, as sent). */
function finalStatus(events: readonly AGUIEvent[]): Record<string, unknown> {
  let status: Record<string, unknown> = {};
  for (const event of events) {
    if (event.type === EventType.STATE_SNAPSHOT) status = { ...(event.snapshot as Record<string, unknown>) };
    if (event.type === EventType.STATE_DELTA) {
      for (const op of event.delta as JsonPatchOperation[]) {
        const key = op.path.slice(1);
        if (op.op === "remove") delete status[key];
        else if (op.op === "add" || op.op === "replace") status[key] = op.value;
      }
    }
  }
  return status;
}
const graphOf = (events: readonly AGUIEvent[]) => finalStatus(events).pipelineGraph as PipelineGraph;
const snapshotGraphOf = (events: readonly AGUIEvent[]) =>
  (events.find((event) => event.type === EventType.STATE_SNAPSHOT) as { snapshot: { pipelineGraph: PipelineGraph } }).snapshot
    .pipelineGraph;

describe("a pipeline graph drawn by views that attach late", () => {
  let harness: Harness;
  const reached = new Map(ATTACH_BEFORE_LINES.map((line) => [line, deferred()]));
  const released = new Map(ATTACH_BEFORE_LINES.map((line) => [line, deferred()]));
  const holdLine: HoldLine = (turn, index) => {
    if (turn.text !== "pipeline" || !reached.has(index)) return undefined;
    reached.get(index)!.resolve();
    return released.get(index)!.promise;
  };
  beforeAll(async () => {
    harness = await startHarness({ holdLine });
  });
  afterAll(() => harness.close());
  const observe = (executionId: string, body: unknown) =>
    postRun(`${harness.service.url}/extensions/iac-code/v1/executions/${executionId}/subscribe`, body);
  const subscriptions = () => harness.kernel.received.filter((call) => call.method === "SubscribeToTask").length;

  it("ends every view with the graph of the view that watched from the start, and of the run's own events", async () => {
    const input = runInput("pipeline", {}, pipelineProps);
    const main = await streamRun(input);
    const observers: Array<Promise<RunResult>> = [];
    for (const line of ATTACH_BEFORE_LINES) {
      await reached.get(line)!.promise;
      const before = subscriptions();
      observers.push(observe(main.executionId, { threadId: input.threadId, runId: input.runId, rosInvocationId: "ros-1" }));
      // Released once this observer follows the task live: what comes next reaches it as it reaches the run.
      await waitFor(() => subscriptions() > before);
      released.get(line)!.resolve();
    }
    const events = await main.events;
    await expectValidRun(events);
    const watched = await Promise.all(observers);
    for (const { events: observed } of watched) {
      await expectValidRun(observed);
      expect(observed.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED });
      // The kernel replays envelopes the graph it was handed has in it already: none may set a step back.
      expect(stepsGoneBack(observed)).toEqual([]);
    }

    const full = graphOf(watched[0]!.events);
    expect(full).toEqual(events.reduce(reducePipelineGraph, emptyPipelineGraph()));
    expect(full).toMatchObject({
      status: "completed",
      steps: [
        { id: "plan", status: "done" },
        { id: "generate", status: "done" },
      ],
    });
    expect(full.steps[1]!.candidates.map((candidate) => [candidate.id, candidate.status, candidate.selected])).toEqual([
      ["subp-generate-0", "done", false],
      ["subp-generate-1", "done", true],
    ]);
    for (const { events: observed } of watched.slice(1)) expect(graphOf(observed)).toEqual(full);

    // A view attaching late is handed the graph so far in its first status: the last one attached with plan done.
    expect(snapshotGraphOf(watched.at(-1)!.events).steps[0]).toMatchObject({ id: "plan", status: "done" });
  });

  it("draws a paused pipeline, whose status no run feeds, from the stream's own replay and the kernel's recovery snapshot", async () => {
    const input = runInput("pipeline-permission", {}, pipelineProps);
    const { events } = await postRun(harness.service.url, input);
    expect(events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "interrupt" } });
    const { executionId } = (
      events.find((event) => event.type === EventType.CUSTOM && event.name === "iac-code.session.v1") as { value: { executionId: string } }
    ).value;
    const drawn = drawing(events.reduce(reducePipelineGraph, emptyPipelineGraph()));
    expect(drawn).toEqual([
      ["validate", "done", []],
      ["deploy", "running", []],
    ]);

    const lastSequence = Math.max(
      ...events.flatMap((event) =>
        event.type === EventType.CUSTOM && event.name === "iac-code.pipeline.v1" ? [(event.value as { sequence: number }).sequence] : [],
      ),
    );
    // From the start, and as a view that saw everything up to the pause and dropped: only the snapshot is new to it.
    for (const afterSequence of [0, lastSequence]) {
      const { events: observed } = await observe(executionId, {
        threadId: input.threadId,
        runId: input.runId,
        rosInvocationId: "ros-1",
        afterSequence,
      });
      await expectValidRun(observed);
      expect([afterSequence, drawing(graphOf(observed))]).toEqual([afterSequence, drawn]);
    }
  });

  /** A run read as it streams: its execution id as soon as its session event is in, all its events at the end. */
  async function streamRun(input: ReturnType<typeof runInput>): Promise<{ executionId: string; events: Promise<AGUIEvent[]> }> {
    const response = await fetch(harness.service.url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify(input),
    });
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let raw = "";
    while (!raw.includes("iac-code.session.v1")) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the run ended before its session event: ${raw}`);
      raw += decoder.decode(value, { stream: true });
    }
    const session = raw.split("\n").find((line) => line.includes("iac-code.session.v1"))!;
    const { executionId } = (JSON.parse(session.slice("data: ".length)) as { value: { executionId: string } }).value;
    const rest = (async () => {
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) raw += decoder.decode(chunk.value, { stream: true });
      return decodeEvents(raw, "text/event-stream");
    })();
    return { executionId, events: rest };
  }
});

/** What a drawing shows: ids, statuses, candidates side by side. */
const drawing = (graph: PipelineGraph) =>
  graph.steps.map((step) => [
    step.id,
    step.status,
    step.candidates.map((candidate) => [candidate.id, candidate.status, candidate.selected]),
  ]);
