/**
 * A view that attaches by thread id while a pipeline runs, in front of a
 * kernel that speaks plain A2A 1.0 (no recovery route, nothing replayed):
 * it learns what happened before it came from the thread status alone, and
 * must still end with the graph and the step spans of a view that watched
 * from the start (docs/pipeline-feed.md, "Attaching late").
 *
 * The kernel plays the recorded `pipeline` run frame by frame; an observer
 * attaches at each point of it (before the first step, mid-step, between
 * steps, mid-candidate, with one candidate done), and in the step of the
 * recorded `pipeline-permission` run that pauses for a permission. Each point is reached by holding the
 * kernel, not by timing: the run's own stream shows the point's event
 * before the observer connects, and the kernel goes on only once the
 * observer listens to the task.
 */
import os from "node:os";
import { afterEach, describe, expect, it } from "@jest/globals";
import { EventType, type AGUIEvent, type RunFinishedEvent } from "@ag-ui/core";
import { emptyPipelineGraph, reducePipelineGraph, type PipelineGraph } from "../../lib/model/pipeline-graph.js";
import { stepFactsFrom } from "../../lib/model/step-facts.js";
import { startService, type RunningService } from "../../lib/server.js";
import { expectValidRun } from "../support/agui.js";
import { stepsGoneBack } from "../support/graph-views.js";
import { connectHttpAgent, connectingAgent, httpAgent, userMessage } from "../support/http-agent.js";
import { testConfig } from "../support/service.js";
import { recordedTurn, startStepKernel, type StepKernel } from "../support/step-kernel.js";

const pipelineProps = { schemaVersion: 1, rosInvocationId: "ros-1", cwd: os.tmpdir(), runMode: "pipeline", pipelineName: "demo" };

/** The kernel sequence an event stands for: a CUSTOM envelope's, or a step event's facts'. */
function sequenceOf(event: AGUIEvent): number | undefined {
  if (event.type === EventType.CUSTOM && event.name === "iac-code.pipeline.v1") return (event.value as { sequence?: number }).sequence;
  if (event.type === EventType.STEP_STARTED || event.type === EventType.STEP_FINISHED) return stepFactsFrom(event)?.sequence;
  return undefined;
}

/** A step span as a view compares it: which step, how it ended, and its times. */
function finishes(events: readonly AGUIEvent[], afterSequence = 0) {
  return events.flatMap((event) => {
    if (event.type !== EventType.STEP_FINISHED) return [];
    const facts = stepFactsFrom(event)!;
    if (facts.outcome === "run-ended" || (facts.sequence ?? 0) <= afterSequence) return [];
    const { stepName } = event;
    return [{ stepName, outcome: facts.outcome, startedAt: facts.startedAt, finishedAt: facts.finishedAt, durationMs: facts.durationMs }];
  });
}

/** Each STEP_FINISHED closes the span its STEP_STARTED opened, under the same name, and no span stays open. */
function unpairedSteps(events: readonly AGUIEvent[]): string[] {
  const open = new Set<string>();
  const unpaired: string[] = [];
  for (const event of events) {
    if (event.type === EventType.STEP_STARTED) open.add(event.stepName);
    if (event.type === EventType.STEP_FINISHED && !open.delete(event.stepName)) unpaired.push(`finish of ${event.stepName}`);
  }
  return [...unpaired, ...[...open].map((name) => `open ${name}`)];
}

interface AttachPoint {
  name: string;
  fixture: string;
  /** How many frames the kernel has played when the observer connects. */
  played: number;
  /** The kernel sequence the run's own stream has shown by then. */
  seenSequence: number;
}

const ATTACH_POINTS: AttachPoint[] = [
  { name: "before the first step", fixture: "pipeline", played: 2, seenSequence: 1 },
  { name: "mid-step (plan)", fixture: "pipeline", played: 3, seenSequence: 2 },
  { name: "between steps", fixture: "pipeline", played: 12, seenSequence: 12 },
  { name: "mid-step (generate, before its candidates)", fixture: "pipeline", played: 13, seenSequence: 13 },
  { name: "mid-candidate", fixture: "pipeline", played: 15, seenSequence: 17 },
  { name: "mid-candidate, after their progress", fixture: "pipeline", played: 21, seenSequence: 24 },
  { name: "with one candidate done", fixture: "pipeline", played: 25, seenSequence: 29 },
  { name: "after the candidate is selected", fixture: "pipeline", played: 27, seenSequence: 32 },
  { name: "between the last step and the pipeline's end", fixture: "pipeline", played: 30, seenSequence: 35 },
  { name: "mid-step, up to the pause for a permission", fixture: "pipeline-permission", played: 8, seenSequence: 7 },
];

describe("a view attached by thread id, in front of a plain A2A 1.0 kernel", () => {
  let kernel: StepKernel | undefined;
  let service: RunningService | undefined;
  afterEach(async () => {
    await service?.close();
    await kernel?.close();
  });

  it.each(ATTACH_POINTS)("ends where the run ended when it attaches $name", async ({ fixture, played, seenSequence }) => {
    const frames = recordedTurn(fixture);
    kernel = await startStepKernel(frames);
    service = await startService(testConfig({ a2aUrl: kernel.url }));
    const { url } = service;

    const watcher = httpAgent(url, { messages: [userMessage(fixture)] });
    const watched: AGUIEvent[] = [];
    let reachedPoint!: () => void;
    const pointShown = new Promise<void>((resolve) => (reachedPoint = resolve));
    const run = watcher.runAgent(
      { forwardedProps: { iacCode: pipelineProps } },
      {
        onEvent: ({ event }) => {
          watched.push(event as AGUIEvent);
          if ((sequenceOf(event as AGUIEvent) ?? 0) >= seenSequence) reachedPoint();
        },
      },
    );
    await kernel.playTo(played);
    await pointShown;

    const connectUrl = `${url}/extensions/iac-code/v1/threads/${encodeURIComponent(watcher.threadId)}/connect`;
    const observer = connectingAgent(url, connectUrl, { threadId: watcher.threadId });
    const observed = connectHttpAgent(observer);
    await kernel.subscribed(1);
    await kernel.playTo(frames.length);
    await run;
    const { events, error } = await observed;
    expect(error).toBeUndefined();

    await expectValidRun(watched);
    await expectValidRun(events);
    expect(unpairedSteps(events)).toEqual([]);

    // The graph a view holds at the end is the one the run's own events draw, wherever it attached.
    const full = watched.reduce(reducePipelineGraph, emptyPipelineGraph());
    expect((observer.state as { pipelineGraph: PipelineGraph }).pipelineGraph).toEqual(full);
    // Every step the run finished after the observer attached, it saw finish too: same outcome, same times.
    expect(finishes(events)).toEqual(finishes(watched, seenSequence));
    // And its graph never showed a step in an earlier state than one it had shown.
    expect(stepsGoneBack(events)).toEqual([]);
  });
});

describe("a view attached by thread id after the run paused at an interrupt, in front of a plain A2A 1.0 kernel", () => {
  let kernel: StepKernel | undefined;
  let service: RunningService | undefined;
  afterEach(async () => {
    await service?.close();
    await kernel?.close();
  });

  const paused = recordedTurn("pipeline-permission");
  const allowed = recordedTurn("pipeline-permission", "allow_once");

  /** Runs the recorded `pipeline-permission` turn to its pause: the watcher's events, and the interrupt it ended with. */
  async function runToThePause() {
    kernel = await startStepKernel(paused, allowed);
    service = await startService(testConfig({ a2aUrl: kernel.url }));
    const watcher = httpAgent(service.url, { messages: [userMessage("pipeline-permission")] });
    const watched: AGUIEvent[] = [];
    const run = watcher.runAgent(
      { forwardedProps: { iacCode: pipelineProps } },
      { onEvent: ({ event }) => void watched.push(event as AGUIEvent) },
    );
    await kernel.playTo(paused.length);
    await run;
    const finished = watched.at(-1) as RunFinishedEvent;
    expect(finished).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "interrupt" } });
    const [interrupt] = finished.outcome!.type === "interrupt" ? finished.outcome!.interrupts : [];
    const connectUrl = `${service.url}/extensions/iac-code/v1/threads/${encodeURIComponent(watcher.threadId)}/connect`;
    return { watcher, watched, interrupt: interrupt!, connectUrl };
  }

  it("draws the graph of a view that watched up to the pause", async () => {
    const { watcher, watched, interrupt, connectUrl } = await runToThePause();
    const atPause = watched.reduce(reducePipelineGraph, emptyPipelineGraph());
    // What a view that watched has drawn: the pipeline, the step done, the one waiting.
    expect(atPause).toMatchObject({
      name: "ros-stack-deploy",
      status: "running",
      steps: [
        { id: "validate", status: "done", durationMs: expect.any(Number) },
        { id: "deploy", status: "running", startedAt: expect.any(String) },
      ],
    });

    const observer = connectingAgent(service!.url, connectUrl, { threadId: watcher.threadId });
    const { events, error } = await connectHttpAgent(observer);
    expect(error).toBeUndefined();
    await expectValidRun(events);
    expect((observer.state as { pipelineGraph: PipelineGraph }).pipelineGraph).toEqual(atPause);
    expect(stepsGoneBack(events)).toEqual([]);
    // It ends at the same pause, with the interrupt the watcher can answer.
    expect(events.at(-1)).toMatchObject({
      type: EventType.RUN_FINISHED,
      outcome: { type: "interrupt", interrupts: [{ id: interrupt.id }] },
    });
  });

  it("goes on from the pause's graph after the answer resumes the run, and ends where the watcher's ended", async () => {
    const { watcher, watched, interrupt, connectUrl } = await runToThePause();
    const resumedWatched: AGUIEvent[] = [];
    let reachedPoint!: () => void;
    const pointShown = new Promise<void>((resolve) => (reachedPoint = resolve));
    // Three frames into the answer's turn: the deployment runs, its progress shown up to sequence 16.
    const seenSequence = 16;
    const resumed = watcher.runAgent(
      {
        forwardedProps: { iacCode: pipelineProps },
        resume: [{ interruptId: interrupt.id, status: "resolved", payload: { decision: "allow_once" } }],
      },
      {
        onEvent: ({ event }) => {
          resumedWatched.push(event as AGUIEvent);
          if ((sequenceOf(event as AGUIEvent) ?? 0) >= seenSequence) reachedPoint();
        },
      },
    );
    await kernel!.playTo(paused.length + 3);
    await pointShown;

    const observer = connectingAgent(service!.url, connectUrl, { threadId: watcher.threadId });
    const observed = connectHttpAgent(observer);
    await kernel!.subscribed(1);
    await kernel!.playTo(paused.length + allowed.length);
    await resumed;
    const { events, error } = await observed;
    expect(error).toBeUndefined();

    await expectValidRun(resumedWatched);
    await expectValidRun(events);
    expect(unpairedSteps(events)).toEqual([]);
    const full = [...watched, ...resumedWatched].reduce(reducePipelineGraph, emptyPipelineGraph());
    expect(full).toMatchObject({
      name: "ros-stack-deploy",
      status: "completed",
      steps: [
        { id: "validate", status: "done" },
        { id: "deploy", status: "done" },
      ],
    });
    expect((observer.state as { pipelineGraph: PipelineGraph }).pipelineGraph).toEqual(full);
    // The step that finished after it came finished on its stream too, with the times the watcher's graph has for it
    // (the resumed run's own span of it was reopened after the pause, and knows its end only).
    const deploy = full.steps.find((step) => step.id === "deploy")!;
    const { startedAt, finishedAt, durationMs } = deploy;
    expect(finishes(events)).toEqual([{ stepName: "deploy", outcome: "completed", startedAt, finishedAt, durationMs }]);
    expect(finishes(resumedWatched)).toMatchObject([{ stepName: "deploy", outcome: "completed", finishedAt }]);
    expect(stepsGoneBack(events)).toEqual([]);
  });
});
