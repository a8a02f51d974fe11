import { describe, expect, it } from "@jest/globals";
import { EventType, type AGUIEvent } from "@ag-ui/core";
import { EventSchemas } from "@ag-ui/core/schemas";
import { from, lastValueFrom, take, toArray } from "rxjs";
import { closeSpans } from "../../operators/close-spans.js";
import { isSignal, type PipelineEnvelope, type RunItem, type SignalOf } from "../../lib/model/kernel-signal.js";
import { projectPipelineEvents } from "../../operators/project-pipeline-events.js";
import { projectSteps } from "../../operators/project-steps.js";
import { keyOnlyFacts, stepMetadata, stepFactsFrom } from "../../lib/model/step-facts.js";
import { expectValidRun } from "../support/agui.js";
import { inChain, marbles, synchronousSource } from "../support/marbles.js";

const step = (phase: "started" | "finished", key: string): RunItem => ({
  kind: "step",
  phase,
  key,
  name: key.startsWith("step:") ? key.slice(5) : key,
});
const keyOf = (stepName: string) => (stepName.startsWith("candidate:") ? stepName : `step:${stepName}`);
/** A step event as a signal with no kernel facts makes it: its key's facts; `reopened` for a span the run did not see start. */
const started = (stepName: string, reopened = false): AGUIEvent => ({
  type: EventType.STEP_STARTED,
  stepName,
  metadata: stepMetadata({ ...keyOnlyFacts(keyOf(stepName)), ...(reopened ? { reopened: true as const } : {}) }),
});
const reopened = (stepName: string) => started(stepName, true);
const finished = (stepName: string): AGUIEvent => ({
  type: EventType.STEP_FINISHED,
  stepName,
  metadata: stepMetadata(keyOnlyFacts(keyOf(stepName))),
});
const end: RunItem = { kind: "run-end", error: undefined, kernelSettled: true };
const endWith = (openSteps: string[]): RunItem => ({ ...end, openSteps });

describe("projectSteps", () => {
  it("opens a step on start and finishes it on finish", () => {
    marbles().run(({ cold, expectObservable }) => {
      const signals = cold("abe", { a: step("started", "step:plan"), b: step("finished", "step:plan"), e: end });
      expectObservable(signals.pipe(projectSteps({ durableOpen: [] }))).toBe("abe", {
        a: started("plan"),
        b: finished("plan"),
        e: endWith([]),
      });
    });
  });

  it("does not open a step twice in one run, and ignores the finish of a step the pipeline does not have open", () => {
    marbles().run(({ cold, expectObservable }) => {
      const signals = cold("abcd", {
        a: step("started", "step:plan"),
        b: step("started", "step:plan"),
        c: step("finished", "step:other"),
        d: end,
      });
      expectObservable(signals.pipe(projectSteps({ durableOpen: [] }))).toBe("a--d", { a: started("plan"), d: endWith(["step:plan"]) });
    });
  });

  it("reopens the durable steps at subscription, sorted by key and named bare for top-level steps, whole for candidates'", () => {
    marbles().run(({ cold, expectObservable }) => {
      const durableOpen = ["step:plan", "candidate:c2:gen", "candidate:c1:gen"];
      expectObservable(cold("-----e", { e: end }).pipe(projectSteps({ durableOpen }))).toBe("(123)e", {
        1: reopened("candidate:c1:gen"),
        2: reopened("candidate:c2:gen"),
        3: reopened("plan"),
        e: endWith(["candidate:c1:gen", "candidate:c2:gen", "step:plan"]),
      });
    });
  });

  it("finishes a reopened step with a plain STEP_FINISHED and does not open it again on a repeated start", () => {
    marbles().run(({ cold, expectObservable }) => {
      const signals = cold("abe", { a: step("started", "step:plan"), b: step("finished", "step:plan"), e: end });
      expectObservable(signals.pipe(projectSteps({ durableOpen: ["step:plan"] }))).toBe("rbe", {
        r: reopened("plan"),
        b: finished("plan"),
        e: endWith([]),
      });
    });
  });

  it("sends a zero-length pair for the finish of a durable step the stream never opened (an observer: reopen false)", () => {
    marbles().run(({ cold, expectObservable }) => {
      const signals = cold("a---b", { a: step("finished", "candidate:c1:gen"), b: end });
      expectObservable(signals.pipe(projectSteps({ durableOpen: ["candidate:c1:gen", "step:plan"], reopen: false }))).toBe("(sf)b", {
        s: reopened("candidate:c1:gen"),
        f: finished("candidate:c1:gen"),
        b: endWith(["step:plan"]),
      });
    });
  });

  it("reopens an observer's open steps with what it knows of them, and shows a finish of a step it never saw start", () => {
    const generate = { ...keyOnlyFacts("step:generate"), attempt: 1, stepRunId: "step-generate-1", startedAt: "2026-03-12T08:14:05.655Z" };
    const finishOf = (key: string, finishedAt: string): RunItem => ({
      ...(step("finished", key) as SignalOf<"step">),
      facts: { ...keyOnlyFacts(key), attempt: 1, finishedAt, outcome: "completed" },
    });
    marbles().run(({ cold, expectObservable }) => {
      const signals = cold("a----b|", {
        a: finishOf("step:plan", "2026-03-12T08:14:05.625Z"),
        b: finishOf("step:generate", "2026-03-12T08:14:06.340Z"),
      });
      const planFinish = {
        ...keyOnlyFacts("step:plan"),
        attempt: 1,
        finishedAt: "2026-03-12T08:14:05.625Z",
        outcome: "completed" as const,
      };
      expectObservable(signals.pipe(projectSteps({ durableOpen: [], observedOpen: [{ ...generate, reopened: true }] }))).toBe("(gpf)d|", {
        g: { type: EventType.STEP_STARTED, stepName: "generate", metadata: stepMetadata({ ...generate, reopened: true }) },
        // Its start came before the observer: a zero-length pair, never a bare finish, and no duration it cannot know.
        p: {
          type: EventType.STEP_STARTED,
          stepName: "plan",
          metadata: stepMetadata({ ...keyOnlyFacts("step:plan"), attempt: 1, reopened: true }),
        },
        f: { type: EventType.STEP_FINISHED, stepName: "plan", metadata: stepMetadata(planFinish) },
        // The start it was told of gives the finish its duration: finishedAt − startedAt.
        d: {
          type: EventType.STEP_FINISHED,
          stepName: "generate",
          metadata: stepMetadata({
            ...keyOnlyFacts("step:generate"),
            attempt: 1,
            finishedAt: "2026-03-12T08:14:06.340Z",
            outcome: "completed",
            startedAt: generate.startedAt,
            durationMs: 685,
          }),
        },
      });
    });
  });

  it("starts every subscription from durableOpen", () => {
    const operator = projectSteps({ durableOpen: ["step:plan"] });
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const signals = cold("a---e|", { a: step("finished", "step:plan"), e: end });
      expectObservable(signals.pipe(operator)).toBe("(ra)e|", { r: reopened("plan"), a: finished("plan"), e: endWith([]) });
      expectObservable(signals.pipe(operator)).toBe("(ra)e|", { r: reopened("plan"), a: finished("plan"), e: endWith([]) });
      expectSubscriptions(signals.subscriptions).toBe(["^----!", "^----!"]);
    });
  });

  it("passes everything else through in order", () => {
    const text: RunItem = { kind: "text", messageId: "m", text: "hi", source: "delta" };
    const event = { type: EventType.CUSTOM, name: "x", value: 1 } as RunItem;
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("ab", { a: text, b: event }).pipe(projectSteps({ durableOpen: [] }))).toBe("ab", { a: text, b: event });
    });
  });

  it("makes schema-valid events", () => {
    for (const event of [started("plan"), reopened("plan"), finished("candidate:c1:gen")]) expect(EventSchemas.parse(event)).toEqual(event);
  });
});

describe("steps across an interrupt", () => {
  const envelope = (eventType: string, extra: Partial<PipelineEnvelope> = {}): RunItem => ({
    kind: "pipeline-event",
    recovered: false,
    envelope: { eventType, step: { id: "deploy", runId: "step-deploy-1" }, ...extra },
  });
  const candidateStep = (eventType: string) =>
    envelope(eventType, { candidate: { id: "c1", runId: "candidate-c1-0-1" }, candidateStep: { id: "gen", runId: "cs-gen-1" } });

  /** One run's stream as a client gets it: RUN_STARTED, the pipeline projected, spans closed before RUN_FINISHED. */
  async function run(signals: RunItem[], durableOpen: readonly string[]) {
    const items = await lastValueFrom(
      from(signals).pipe(projectPipelineEvents({ threadId: "th" }), projectSteps({ durableOpen }), toArray()),
    );
    const runEnd = items.find((item): item is SignalOf<"run-end"> => isSignal(item) && item.kind === "run-end")!;
    const projected = items.filter((item): item is AGUIEvent => !isSignal(item));
    const body: AGUIEvent[] = [
      { type: EventType.RUN_STARTED, threadId: "th", runId: "r" },
      ...projected,
      { type: EventType.RUN_FINISHED, threadId: "th", runId: "r", outcome: { type: "success" } },
    ];
    const events = await lastValueFrom(from(body).pipe(closeSpans(), toArray()));
    await expectValidRun(events);
    return { events, openSteps: runEnd.openSteps };
  }

  it("keeps steps balanced across two runs: started in the first, reopened after RUN_STARTED and finished in the second", async () => {
    const first = await run([envelope("step_started"), candidateStep("candidate_step_started"), end], []);
    expect(first.openSteps).toEqual(["candidate:c1:gen", "step:deploy"]);
    expect(first.events.map((event) => [event.type, (event as { stepName?: string }).stepName])).toEqual([
      [EventType.RUN_STARTED, undefined],
      [EventType.STEP_STARTED, "deploy"],
      [EventType.STEP_STARTED, "candidate:c1:gen"],
      [EventType.STEP_FINISHED, "candidate:c1:gen"],
      [EventType.STEP_FINISHED, "deploy"],
      [EventType.RUN_FINISHED, undefined],
    ]);

    const second = await run([candidateStep("candidate_step_completed"), envelope("step_completed"), end], first.openSteps!);
    expect(second.openSteps).toEqual([]);
    expect(second.events.map((event) => [event.type, (event as { stepName?: string }).stepName])).toEqual([
      [EventType.RUN_STARTED, undefined],
      [EventType.STEP_STARTED, "candidate:c1:gen"],
      [EventType.STEP_STARTED, "deploy"],
      [EventType.STEP_FINISHED, "candidate:c1:gen"],
      [EventType.STEP_FINISHED, "deploy"],
      [EventType.RUN_FINISHED, undefined],
    ]);
  });
});

describe("projectSteps and its subscription", () => {
  it("should not break unsubscription chain when unsubscribed explicitly", () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const signals = cold("---a-b-e|", { a: step("started", "step:plan"), b: step("finished", "step:plan"), e: end });
      expectObservable(signals.pipe(inChain(projectSteps({ durableOpen: ["step:build"] }))), "^----!").toBe("r--a", {
        r: reopened("build"),
        a: started("plan"),
      });
      expectSubscriptions(signals.subscriptions).toBe("^----!");
    });
  });

  it("reads a synchronous source after the reopened steps, and does not subscribe to it when the subscriber leaves first", () => {
    const whole = synchronousSource([step("finished", "step:plan"), end]);
    const seen: RunItem[] = [];
    whole.source.pipe(projectSteps({ durableOpen: ["step:plan"] })).subscribe((item) => seen.push(item));
    expect(seen).toEqual([reopened("plan"), finished("plan"), endWith([])]);

    const early = synchronousSource([step("started", "step:a"), end]);
    early.source.pipe(projectSteps({ durableOpen: ["step:plan"] }), take(1)).subscribe();
    expect(early.sent).toEqual([]);

    const { source, sent } = synchronousSource([step("started", "step:a"), step("started", "step:b"), end]);
    source.pipe(projectSteps({ durableOpen: [] }), take(1)).subscribe();
    expect(sent).toEqual([step("started", "step:a")]);
  });
});

describe('the facts on step events (metadata["iac-code"].step)', () => {
  const pipelineRunId = "prun-1";
  const generate = { id: "generate", runId: "step-generate-1", attempt: 1, index: 1, total: 2, type: "parallel_candidates" };
  const envelope = (eventType: string, fields: Partial<PipelineEnvelope>): RunItem => ({
    kind: "pipeline-event",
    recovered: false,
    envelope: { eventType, pipelineRunId, eventId: `evt-${eventType}-${String(fields.sequence)}`, ...fields },
  });
  const plan = (attempt: number) => ({ id: "plan", runId: `step-plan-${attempt}`, attempt, index: 0, total: 2, type: "agent" });
  const candidateA = { id: "subp-0", runId: "candidate-subp-0-0-1", index: 0, attempt: 1, name: "Candidate A" };
  const draft = { id: "draft", runId: "cstep-subp-0-draft-1", attempt: 1, index: 0, total: 1 };

  async function stepEvents(signals: RunItem[], durableOpen: readonly string[] = []) {
    const items = await lastValueFrom(
      from([...signals, end]).pipe(projectPipelineEvents({ threadId: "th" }), projectSteps({ durableOpen }), toArray()),
    );
    const body: AGUIEvent[] = [
      { type: EventType.RUN_STARTED, threadId: "th", runId: "r" },
      ...items.filter((item): item is AGUIEvent => !isSignal(item) && item.type !== EventType.CUSTOM),
      { type: EventType.RUN_FINISHED, threadId: "th", runId: "r", outcome: { type: "success" } },
    ];
    const events = await lastValueFrom(from(body).pipe(closeSpans(), toArray()));
    await expectValidRun(events);
    for (const event of events) expect(EventSchemas.parse(event)).toEqual(event);
    return events.filter((event) => event.type === EventType.STEP_STARTED || event.type === EventType.STEP_FINISHED);
  }

  it("carries type, index, total, attempt, run ids and times, and the outcome on the finish; the duration is end − start", async () => {
    const events = await stepEvents([
      envelope("step_started", { sequence: 2, createdAt: "2026-03-12T08:14:05.170Z", step: plan(1) }),
      envelope("step_completed", { sequence: 12, createdAt: "2026-03-12T08:14:05.625Z", step: plan(1), data: { durationMs: 1840 } }),
    ]);
    expect(events.map(stepFactsFrom)).toEqual([
      {
        schemaVersion: 1,
        key: "step:plan",
        stepId: "plan",
        stepRunId: "step-plan-1",
        pipelineRunId,
        type: "agent",
        index: 0,
        total: 2,
        attempt: 1,
        sequence: 2,
        startedAt: "2026-03-12T08:14:05.170Z",
      },
      {
        schemaVersion: 1,
        key: "step:plan",
        stepId: "plan",
        stepRunId: "step-plan-1",
        pipelineRunId,
        type: "agent",
        index: 0,
        total: 2,
        attempt: 1,
        sequence: 12,
        startedAt: "2026-03-12T08:14:05.170Z",
        finishedAt: "2026-03-12T08:14:05.625Z",
        // One rule, whatever the kernel measured (its data.durationMs here): finishedAt − startedAt.
        durationMs: 455,
        outcome: "completed",
      },
    ]);
  });

  it("tells a failed attempt from its retry, and a skipped step from a completed one", async () => {
    const events = await stepEvents([
      envelope("step_started", { sequence: 1, step: plan(1) }),
      envelope("step_failed", { sequence: 2, step: plan(1), data: { error: { code: "TEMPLATE_INVALID", message: "bad template" } } }),
      envelope("step_started", { sequence: 3, step: plan(2) }),
      envelope("step_completed", { sequence: 4, step: plan(2), data: { outcome: "skipped" } }),
    ]);
    expect(
      events.map((event) => [event.type, stepFactsFrom(event)?.attempt, stepFactsFrom(event)?.stepRunId, stepFactsFrom(event)?.outcome]),
    ).toEqual([
      [EventType.STEP_STARTED, 1, "step-plan-1", undefined],
      [EventType.STEP_FINISHED, 1, "step-plan-1", "failed"],
      [EventType.STEP_STARTED, 2, "step-plan-2", undefined],
      [EventType.STEP_FINISHED, 2, "step-plan-2", "skipped"],
    ]);
    expect(stepFactsFrom(events[1]!)?.error).toEqual({ code: "TEMPLATE_INVALID", message: "bad template" });
  });

  it("names a candidate step's parent: the step that runs the candidates, and the candidate", async () => {
    const [start] = await stepEvents([
      envelope("candidate_step_started", { sequence: 5, step: generate, candidate: candidateA, candidateStep: draft }),
    ]);
    expect(stepFactsFrom(start!)).toMatchObject({
      key: "candidate:subp-0:draft",
      stepId: "draft",
      stepRunId: "cstep-subp-0-draft-1",
      index: 0,
      total: 1,
      parent: {
        stepId: "generate",
        stepRunId: "step-generate-1",
        candidateId: "subp-0",
        candidateRunId: "candidate-subp-0-0-1",
        candidateIndex: 0,
        candidateName: "Candidate A",
      },
    });
  });

  it("marks a span that does not mark the step's start as reopened, and a span closed with the run as run-ended", async () => {
    const events = await stepEvents([envelope("input_received", { sequence: 7, step: plan(1) })], ["step:generate"]);
    expect(events.map((event) => [event.type, event.stepName, stepFactsFrom(event)?.reopened, stepFactsFrom(event)?.outcome])).toEqual([
      [EventType.STEP_STARTED, "generate", true, undefined],
      [EventType.STEP_STARTED, "plan", true, undefined],
      [EventType.STEP_FINISHED, "generate", undefined, "run-ended"],
      [EventType.STEP_FINISHED, "plan", undefined, "run-ended"],
    ]);
    expect(stepFactsFrom(events[1]!)?.startedAt).toBeUndefined();
  });
});
