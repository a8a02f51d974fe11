import { describe, expect, it } from "@jest/globals";
import { EventType, type AGUIEvent } from "@ag-ui/core";
import { EventSchemas } from "@ag-ui/core/schemas";
import { from, lastValueFrom, take, toArray } from "rxjs";
import { closeSpans } from "../../operators/close-spans.js";
import { isSignal, type PipelineEnvelope, type RunItem, type SignalOf } from "../../lib/model/kernel-signal.js";
import { projectPipelineEvents } from "../../operators/project-pipeline-events.js";
import { projectSteps } from "../../operators/project-steps.js";
import { expectValidRun } from "../support/agui.js";
import { inChain, marbles, synchronousSource } from "../support/marbles.js";

const step = (phase: "started" | "finished", key: string): RunItem => ({
  kind: "step",
  phase,
  key,
  name: key.startsWith("step:") ? key.slice(5) : key,
});
const started = (stepName: string): AGUIEvent => ({ type: EventType.STEP_STARTED, stepName });
const finished = (stepName: string): AGUIEvent => ({ type: EventType.STEP_FINISHED, stepName });
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
        1: started("candidate:c1:gen"),
        2: started("candidate:c2:gen"),
        3: started("plan"),
        e: endWith(["candidate:c1:gen", "candidate:c2:gen", "step:plan"]),
      });
    });
  });

  it("finishes a reopened step with a plain STEP_FINISHED and does not open it again on a repeated start", () => {
    marbles().run(({ cold, expectObservable }) => {
      const signals = cold("abe", { a: step("started", "step:plan"), b: step("finished", "step:plan"), e: end });
      expectObservable(signals.pipe(projectSteps({ durableOpen: ["step:plan"] }))).toBe("rbe", {
        r: started("plan"),
        b: finished("plan"),
        e: endWith([]),
      });
    });
  });

  it("sends a zero-length pair for the finish of a durable step the stream never opened (an observer: reopen false)", () => {
    marbles().run(({ cold, expectObservable }) => {
      const signals = cold("a---b", { a: step("finished", "candidate:c1:gen"), b: end });
      expectObservable(signals.pipe(projectSteps({ durableOpen: ["candidate:c1:gen", "step:plan"], reopen: false }))).toBe("(sf)b", {
        s: started("candidate:c1:gen"),
        f: finished("candidate:c1:gen"),
        b: endWith(["step:plan"]),
      });
    });
  });

  it("starts every subscription from durableOpen", () => {
    const operator = projectSteps({ durableOpen: ["step:plan"] });
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const signals = cold("a---e|", { a: step("finished", "step:plan"), e: end });
      expectObservable(signals.pipe(operator)).toBe("(ra)e|", { r: started("plan"), a: finished("plan"), e: endWith([]) });
      expectObservable(signals.pipe(operator)).toBe("(ra)e|", { r: started("plan"), a: finished("plan"), e: endWith([]) });
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
    for (const event of [started("plan"), finished("candidate:c1:gen")]) expect(EventSchemas.parse(event)).toEqual(event);
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
        r: started("build"),
        a: started("plan"),
      });
      expectSubscriptions(signals.subscriptions).toBe("^----!");
    });
  });

  it("reads a synchronous source after the reopened steps, and does not subscribe to it when the subscriber leaves first", () => {
    const whole = synchronousSource([step("finished", "step:plan"), end]);
    const seen: RunItem[] = [];
    whole.source.pipe(projectSteps({ durableOpen: ["step:plan"] })).subscribe((item) => seen.push(item));
    expect(seen).toEqual([started("plan"), finished("plan"), endWith([])]);

    const early = synchronousSource([step("started", "step:a"), end]);
    early.source.pipe(projectSteps({ durableOpen: ["step:plan"] }), take(1)).subscribe();
    expect(early.sent).toEqual([]);

    const { source, sent } = synchronousSource([step("started", "step:a"), step("started", "step:b"), end]);
    source.pipe(projectSteps({ durableOpen: [] }), take(1)).subscribe();
    expect(sent).toEqual([step("started", "step:a")]);
  });
});
