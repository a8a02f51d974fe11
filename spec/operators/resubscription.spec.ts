/**
 * Every operator that remembers something (spans open, ids seen, a cursor,
 * the last status) must remember it per subscription, not per factory call:
 * one operator instance may be applied once and subscribed again (`repeat`,
 * a retry, an observer that attaches twice), and a second subscription that
 * inherits the first one's state drops, doubles or misnames what it shows.
 * Each case below calls the factory once, subscribes twice, and expects the
 * second subscription to behave as a fresh one. Where the same input would
 * hide the leak (the first subscription ends with its state cleared, or the
 * second sends the same ids), `scripted` hands each subscription its own
 * input.
 *
 * The cases live in one file, beside the operators' own specs, so that the
 * list of operators that keep state is in one place, and the last block
 * holds it against `operators/`: a new operator is filed as one or the
 * other.
 */
import { describe, expect, it } from "@jest/globals";
import { readdirSync } from "node:fs";
import path from "node:path";
import { EventType, type AGUIEvent } from "@ag-ui/core";
import { defer, of, repeat, type Observable } from "rxjs";
import type { KernelSignal, RunItem } from "../../lib/model/kernel-signal.js";
import { runMessageId, toolResultMessageId, toolTurnMessageId } from "../../lib/model/message-ids.js";
import { emptyPipelineGraph, reducePipelineGraph } from "../../lib/model/pipeline-graph.js";
import { defaultPipelineRunId, pipelineActivityId } from "../../lib/model/pipeline-ids.js";
import { keyOnlyFacts, stepMetadata } from "../../lib/model/step-facts.js";
import { PROJECT_ROOT } from "../../lib/paths.js";
import { aggregateUsage } from "../../operators/aggregate-usage.js";
import { announceSession, sessionEvent } from "../../operators/announce-session.js";
import { awaitInOrder } from "../../operators/await-in-order.js";
import { closeSpans } from "../../operators/close-spans.js";
import { continueAfterDrop } from "../../operators/continue-after-drop.js";
import { cumulativeTextAsDeltas } from "../../operators/cumulative-text-as-deltas.js";
import { dedupePipelineEvents } from "../../operators/dedupe-pipeline-events.js";
import { emitEach } from "../../operators/emit-each.js";
import { endWithRunError } from "../../operators/end-with-run-error.js";
import { engageFrom } from "../../operators/engage-from.js";
import { interruptToolName, interruptsAsTools } from "../../operators/interrupts-as-tools.js";
import { keepPipelineGraphCurrent } from "../../operators/keep-pipeline-graph.js";
import { HEARTBEAT, mergeHeartbeat } from "../../operators/merge-heartbeat.js";
import { persistIdsAside } from "../../operators/persist-ids-aside.js";
import { PIPELINE_EVENT, projectPipelineEvents } from "../../operators/project-pipeline-events.js";
import { projectReasoning } from "../../operators/project-reasoning.js";
import { projectSteps } from "../../operators/project-steps.js";
import { projectText } from "../../operators/project-text.js";
import { projectTools } from "../../operators/project-tools.js";
import { settleStatus } from "../../operators/settle-status.js";
import { toKernelSignals } from "../../operators/to-kernel-signals.js";
import { toStateEvents } from "../../operators/to-state-events.js";
import type { A2AUpdate } from "../../operators/unwrap-stream-response.js";
import { marbles } from "../support/marbles.js";

/** A source that hands each new subscriber the next of `scripts`. */
function scripted<T>(...scripts: Observable<T>[]): Observable<T> {
  let next = 0;
  return defer(() => {
    const script = scripts[next++];
    if (script === undefined) throw new Error(`only ${scripts.length} subscriptions scripted`);
    return script;
  });
}

const end: RunItem = { kind: "run-end", error: undefined, kernelSettled: true };
const finished: AGUIEvent = { type: EventType.RUN_FINISHED, threadId: "t", runId: "r" };

/** The operators with a case below: those whose factory keeps state. */
const covered = new Set<string>();
/** A case for `operator` (its file name in `operators/`), filed as one that keeps state. */
function resubscribing(operator: string, behaviour: string, body: () => void | Promise<void>): void {
  covered.add(operator);
  it(`${operator}: ${behaviour}`, body);
}

/** Operators that remember nothing between items: a map, a filter, or one decision per item. */
const STATELESS = [
  "end-run-on-task-state",
  "finish-run",
  "neutralize-terminal-controls",
  "open-with",
  "project-artifacts",
  "stamp-time",
  "unwrap-stream-response",
];

describe("re-subscription: an operator instance subscribed twice starts afresh each time", () => {
  resubscribing("emit-each", "the index restarts at 0", () => {
    const numbered = emitEach((item: string, index: number) => [`${item}${index}`]);
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("ab|").pipe(numbered, repeat(2))).toBe("xyxy|", { x: "a0", y: "b1" });
    });
  });

  resubscribing("engage-from", "the second subscription passes items around the operator again until one engages it", () => {
    const numberedFromX = engageFrom(
      (item: string) => item === "x",
      emitEach((item: string, index: number) => [`${item}${index}`]),
    );
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("axb|").pipe(numberedFromX, repeat(2))).toBe("ayzayz|", { a: "a", y: "x0", z: "b1" });
    });
  });

  resubscribing("aggregate-usage", "the second run's end carries its own usage, not both runs' summed", () => {
    const aggregate = aggregateUsage();
    const usage: RunItem = { kind: "usage", usage: { provider: "p", model: "m", inputTokens: 10, outputTokens: 1, totalTokens: 11 } };
    const summed = {
      ...end,
      usage: [{ provider: "p", model: "m", inputTokens: 10, outputTokens: 1, totalTokens: 11, cachedInputTokens: 0 }],
    };
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("ae|", { a: usage, e: end }).pipe(aggregate, repeat(2))).toBe("-e-e|", { e: summed });
    });
  });

  resubscribing("announce-session", "the second subscription announces its session again", () => {
    const identity = { threadId: "th", runId: "r1", executionId: "e1", contextId: "c", rosInvocationId: "ros-1" };
    const announce = announceSession(identity);
    const task: RunItem = { kind: "task-bound", taskId: "t1", contextId: "c" };
    const session: RunItem = { kind: "session-bound", sessionId: "s1" };
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("ab---|", { a: task, b: session }).pipe(announce, repeat(2))).toBe("a(bs)a(bs)|", {
        a: task,
        b: session,
        s: sessionEvent(identity, { taskId: "t1", sessionId: "s1" }),
      });
    });
  });

  resubscribing("persist-ids-aside", "a subscription that left while a write was under way does not hold the next one's end", async () => {
    let commit!: () => void;
    const write = new Promise<void>((resolve) => (commit = resolve));
    const task: KernelSignal = { kind: "task-bound", taskId: "t1", contextId: undefined };
    const aside = persistIdsAside((signal) => (signal.kind === "task-bound" && signal.taskId === "t1" ? write : undefined));
    const signals = scripted<KernelSignal>(of(task, end as KernelSignal), of(end as KernelSignal)).pipe(aside);

    const first: KernelSignal[] = [];
    signals.subscribe((signal) => first.push(signal)).unsubscribe();
    const second: KernelSignal[] = [];
    signals.subscribe((signal) => second.push(signal));
    expect(first).toEqual([{ ...task, storing: true }]);
    expect(second).toEqual([end]);
    commit();
    await write;
    await Promise.resolve();
    expect(first).toEqual([{ ...task, storing: true }]);
  });

  resubscribing("await-in-order", "a subscription that left while work was pending does not hold back the next one", async () => {
    let release!: (value: string) => void;
    const gate = new Promise<string>((resolve) => (release = resolve));
    const inOrder = awaitInOrder((item: string) => (item === "b" ? gate : item));
    const items = of("a", "b", "c").pipe(inOrder);

    const first: string[] = [];
    items.subscribe((item) => first.push(item)).unsubscribe();
    const second: string[] = [];
    let completed = false;
    items.subscribe({ next: (item) => second.push(item), complete: () => (completed = true) });
    expect(first).toEqual(["a"]);
    expect(second).toEqual(["a"]);

    release("B");
    await gate;
    await Promise.resolve();
    expect(first).toEqual(["a"]);
    expect(second).toEqual(["a", "B", "c"]);
    expect(completed).toBe(true);
  });

  resubscribing("close-spans", "the second run closes only its own open spans", () => {
    const close = closeSpans();
    const opened = (messageId: string): AGUIEvent => ({ type: EventType.TEXT_MESSAGE_START, messageId, role: "assistant" });
    marbles().run(({ cold, expectObservable }) => {
      // The first stream completes with m1 still open, which close-spans leaves as it is.
      const source = scripted(cold("a|", { a: opened("m1") }), cold("bf", { b: opened("m2"), f: finished }));
      expectObservable(source.pipe(close, repeat(2))).toBe("ab(ef|)", {
        a: opened("m1"),
        b: opened("m2"),
        e: { type: EventType.TEXT_MESSAGE_END, messageId: "m2" },
        f: finished,
      });
    });
  });

  resubscribing("continue-after-drop", "the second subscription has its own re-attachments", () => {
    marbles().run(({ cold, expectObservable }) => {
      const follow = continueAfterDrop(() => cold<string>("c|"), 1);
      expectObservable(cold<string>("a|").pipe(follow, repeat(2))).toBe("acac|");
    });
  });

  resubscribing("cumulative-text-as-deltas", "the second subscription sends a message's first text whole, as new", () => {
    const asDeltas = cumulativeTextAsDeltas();
    const text = (words: string): RunItem => ({ kind: "text", messageId: "m1", text: words, source: "delta" });
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("ab|", { a: text("Hello,"), b: text("Hello, again") }).pipe(asDeltas, repeat(2))).toBe("abab|", {
        a: text("Hello,"),
        b: text(" again"),
      });
    });
  });

  resubscribing("dedupe-pipeline-events", "the second subscription keeps the envelope the first one saw, from its own cursor", () => {
    const dedupe = dedupePipelineEvents({ cursor: 0 });
    const live: RunItem = {
      kind: "pipeline-event",
      recovered: false,
      envelope: { eventType: "pipeline_warning", eventId: "e1", sequence: 1 },
    };
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("ae|", { a: live, e: end }).pipe(dedupe, repeat(2))).toBe("aeae|", {
        a: live,
        e: { ...end, pipelineSequence: 1 },
      });
    });
  });

  resubscribing("end-with-run-error", "a failure before anything passed is told with the opening, though the first run had ended", () => {
    const started: AGUIEvent = { type: EventType.RUN_STARTED, threadId: "t", runId: "r" };
    const runError = (error: unknown): AGUIEvent => ({ type: EventType.RUN_ERROR, code: "INTERNAL_ERROR", message: String(error) });
    const ending = endWithRunError(runError, [started]);
    marbles().run(({ cold, expectObservable }) => {
      const source = scripted(cold("f#", { f: finished }, "late"), cold("#", {}, "early"));
      expectObservable(source.pipe(ending, repeat(2))).toBe("f(se|)", { f: finished, s: started, e: runError("early") });
    });
  });

  resubscribing("interrupts-as-tools", "the second run's interrupt is not placed in the first run's message", () => {
    const asTools = interruptsAsTools({ runId: "r" });
    const interrupt = { id: "i1", reason: "tool_call", message: "Allow?", metadata: { kind: "permission" } };
    const paused: AGUIEvent = { ...finished, outcome: { type: "interrupt", interrupts: [interrupt] } };
    const parentMessageId = toolTurnMessageId("r", "i1");
    const text: AGUIEvent = { type: EventType.TEXT_MESSAGE_START, messageId: "m1", role: "assistant" };
    marbles().run(({ cold, expectObservable }) => {
      const source = scripted<AGUIEvent>(cold("t|", { t: text }), cold("p-----|", { p: paused }));
      expectObservable(source.pipe(asTools, repeat(2))).toBe("t(saep)|", {
        t: text,
        s: { type: EventType.TOOL_CALL_START, toolCallId: "i1", toolCallName: interruptToolName(interrupt), parentMessageId },
        a: {
          type: EventType.TOOL_CALL_ARGS,
          toolCallId: "i1",
          delta: JSON.stringify({ message: "Allow?", metadata: { kind: "permission" } }),
        },
        e: { type: EventType.TOOL_CALL_END, toolCallId: "i1" },
        p: paused,
      });
    });
  });

  resubscribing("keep-pipeline-graph", "the second subscription takes its graph from its own status snapshot", () => {
    const keep = keepPipelineGraphCurrent<AGUIEvent>();
    const started: AGUIEvent = {
      type: EventType.STEP_STARTED,
      stepName: "plan",
      metadata: stepMetadata({ schemaVersion: 1, key: "step:plan", stepId: "plan", attempt: 1 }),
    };
    const snapshot: AGUIEvent = { type: EventType.STATE_SNAPSHOT, snapshot: { runActive: true, pipelineGraph: emptyPipelineGraph() } };
    const delta: AGUIEvent = {
      type: EventType.STATE_DELTA,
      delta: [{ op: "replace", path: "/pipelineGraph", value: reducePipelineGraph(emptyPipelineGraph(), started) }],
    };
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("s-a----|", { s: snapshot, a: started }).pipe(keep, repeat(2))).toBe("s-(ad)-s-(ad)-|", {
        s: snapshot,
        a: started,
        d: delta,
      });
    });
  });

  resubscribing("merge-heartbeat", "a busy subscription does not keep a quiet one from beating", () => {
    marbles().run(({ cold, expectObservable }) => {
      const beat = mergeHeartbeat<string>(3);
      const source = scripted(cold<string>("a-b-c-d|"), cold<string>("--------|"));
      const beating = source.pipe(beat);
      expectObservable(beating).toBe("a-b-c-d|");
      expectObservable(beating).toBe("---h--h-|", { h: HEARTBEAT });
    });
  });

  resubscribing("project-pipeline-events", "the second subscription names its activity by its own pipeline run", () => {
    const project = projectPipelineEvents({ threadId: "t" });
    const recovered = (pipelineRunId: string): AGUIEvent => ({
      type: EventType.ACTIVITY_SNAPSHOT,
      messageId: pipelineActivityId(pipelineRunId),
      activityType: PIPELINE_EVENT,
      content: { schemaVersion: 1, pipelineRunId, snapshot: pipelineRunId === "p1" ? { pipelineRunId } : {} },
      replace: true,
    });
    marbles().run(({ cold, expectObservable }) => {
      const source = scripted<RunItem>(
        cold("a|", { a: { kind: "pipeline-snapshot", snapshot: { pipelineRunId: "p1" } } }),
        cold("b|", { b: { kind: "pipeline-snapshot", snapshot: {} } }),
      );
      expectObservable(source.pipe(project, repeat(2))).toBe("ab|", { a: recovered("p1"), b: recovered(defaultPipelineRunId("t")) });
    });
  });

  resubscribing("project-reasoning", "the second subscription opens its own reasoning span", () => {
    const reason = projectReasoning({ runId: "r" });
    const id = "reasoning-r";
    const thinking: RunItem = { kind: "reasoning", text: "hm" };
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("a----|", { a: thinking }).pipe(reason, repeat(2))).toBe("(smc)(smc)|", {
        s: { type: EventType.REASONING_START, messageId: id },
        m: { type: EventType.REASONING_MESSAGE_START, messageId: id, role: "reasoning" },
        c: { type: EventType.REASONING_MESSAGE_CONTENT, messageId: id, delta: "hm" },
      });
    });
  });

  resubscribing("project-steps", "the second subscription reopens the durable steps the first one finished", () => {
    const steps = projectSteps({ durableOpen: ["step:plan"] });
    const finish: RunItem = { kind: "step", phase: "finished", key: "step:plan", name: "plan" };
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("-fe|", { f: finish, e: end }).pipe(steps, repeat(2))).toBe("ofeofe|", {
        o: { type: EventType.STEP_STARTED, stepName: "plan", metadata: stepMetadata({ ...keyOnlyFacts("step:plan"), reopened: true }) },
        f: { type: EventType.STEP_FINISHED, stepName: "plan", metadata: stepMetadata(keyOnlyFacts("step:plan")) },
        e: { ...end, openSteps: [] },
      });
    });
  });

  resubscribing("project-text", "the second subscription sends its whole answer, as no text was sent in it yet", () => {
    const text = projectText({ runId: "r" });
    const messageId = runMessageId("r", "k");
    marbles().run(({ cold, expectObservable }) => {
      const answer: RunItem = { kind: "text", messageId: "k", text: "hi", source: "final" };
      expectObservable(cold("a----|", { a: answer }).pipe(text, repeat(2))).toBe("(sce)(sce)|", {
        s: { type: EventType.TEXT_MESSAGE_START, messageId, role: "assistant" },
        c: { type: EventType.TEXT_MESSAGE_CONTENT, messageId, delta: "hi" },
        e: { type: EventType.TEXT_MESSAGE_END, messageId },
      });
    });
  });

  resubscribing("project-tools", "the second subscription sends the result of a call the first one answered", () => {
    const tools = projectTools({ runId: "r" });
    const completed: RunItem = { kind: "tool", status: "completed", toolCallId: "t1", toolName: "ls", input: {}, result: "ok" };
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("a|", { a: completed }).pipe(tools, repeat(2))).toBe("rr|", {
        r: {
          type: EventType.TOOL_CALL_RESULT,
          messageId: toolResultMessageId("r", "t1"),
          toolCallId: "t1",
          content: "ok",
          role: "tool",
          metadata: { "iac-code": { status: "completed" } },
        },
      });
    });
  });

  resubscribing("settle-status", "a stream that showed no status settles none, though the first one did", () => {
    const settle = settleStatus<{ runActive: boolean }, AGUIEvent>((status) => ({ ...status, runActive: false }));
    const snapshot: AGUIEvent = { type: EventType.STATE_SNAPSHOT, snapshot: { runActive: true } };
    marbles().run(({ cold, expectObservable }) => {
      // The first stream ends before its run does, with the status still shown as active.
      const source = scripted<AGUIEvent>(cold("s|", { s: snapshot }), cold("f|", { f: finished }));
      expectObservable(source.pipe(settle, repeat(2))).toBe("sf|", { s: snapshot, f: finished });
    });
  });

  resubscribing("to-kernel-signals", "the second subscription binds the task and tells its state again", () => {
    const signals = toKernelSignals({ findInputs: () => [] });
    const working: A2AUpdate = { kind: "statusUpdate", body: { taskId: "t1", contextId: "c", status: { state: "working" } } };
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("a---|", { a: working }).pipe(signals, repeat(2))).toBe("(bw)(bw)|", {
        b: { kind: "task-bound", taskId: "t1", contextId: "c" },
        w: { kind: "task-state", state: "working" },
      });
    });
  });

  resubscribing("to-state-events", "the second subscription starts with a snapshot", () => {
    const stateEvents = toStateEvents<{ runActive: boolean }>();
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("a|", { a: { runActive: true } }).pipe(stateEvents, repeat(2))).toBe("ss|", {
        s: { type: EventType.STATE_SNAPSHOT, snapshot: { runActive: true } },
      });
    });
  });
});

describe("which operators keep state", () => {
  it("files every operator as stateful (with a case above) or stateless", () => {
    const operators = readdirSync(path.join(PROJECT_ROOT, "operators"))
      .filter((file) => file.endsWith(".ts"))
      .map((file) => file.slice(0, -".ts".length))
      .sort();
    expect([...covered, ...STATELESS].sort()).toEqual(operators);
  });
});
