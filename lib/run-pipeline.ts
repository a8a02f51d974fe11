/**
 * The operator chain of a run, written once: what the kernel says goes in,
 * AG-UI events (and heartbeats) for the SSE sink come out. A service run
 * (`run.ts`), an observer stream (`threads/observe.ts`), the property tests
 * and the bench all run this same chain; they differ only in the ports they
 * plug in (persistence, drops, status, scheduler).
 *
 * Four phases, in order; read `runPipeline` at the bottom for the whole run:
 *   readKernel     → when and how the run ends, the ids the thread must remember
 *   unfoldPipeline → pipeline envelopes, each once, as signals and CUSTOM events, with step spans
 *   projectToAgui  → kernel signals to AG-UI events; the end committed before it is told
 *   deliver        → a well-formed stream for the sink: RUN_STARTED first, no span left open, each event stamped, heartbeats
 */
import type { AGUIEvent } from "@ag-ui/core";
import {
  identity,
  merge,
  pipe,
  takeWhile,
  type MonoTypeOperatorFunction,
  Observable,
  type OperatorFunction,
  type SchedulerLike,
} from "rxjs";
import { toAguiError } from "./errors.js";
import { isSignal, type KernelSignal, type RunItem, type SignalOf } from "./model/kernel-signal.js";
import type { StepFacts } from "./model/step-facts.js";
import { aggregateUsage } from "../operators/aggregate-usage.js";
import { announceSession, type KnownSession, type SessionIdentity } from "../operators/announce-session.js";
import { awaitInOrder } from "../operators/await-in-order.js";
import { closeSpans } from "../operators/close-spans.js";
import { cumulativeTextAsDeltas } from "../operators/cumulative-text-as-deltas.js";
import { dedupePipelineEvents } from "../operators/dedupe-pipeline-events.js";
import { endWithRunError } from "../operators/end-with-run-error.js";
import { pipeStages } from "../operators/emit-each.js";
import { engageFrom } from "../operators/engage-from.js";
import { endRunOnTaskState } from "../operators/end-run-on-task-state.js";
import { finishRun, runErrorEvent, type ErrorDescriber } from "../operators/finish-run.js";
import { interruptsAsTools } from "../operators/interrupts-as-tools.js";
import { mergeHeartbeat, type Heartbeat } from "../operators/merge-heartbeat.js";
import { neutralizeTerminalControls } from "../operators/neutralize-terminal-controls.js";
import { openWith } from "../operators/open-with.js";
import { persistIdsAside } from "../operators/persist-ids-aside.js";
import { projectArtifacts } from "../operators/project-artifacts.js";
import { projectPipelineEvents } from "../operators/project-pipeline-events.js";
import { projectReasoning } from "../operators/project-reasoning.js";
import { projectSteps } from "../operators/project-steps.js";
import { projectText } from "../operators/project-text.js";
import { projectTools } from "../operators/project-tools.js";
import { stampTime } from "../operators/stamp-time.js";
import { tapEach } from "./rx/tap-each.js";

export type SseItem = AGUIEvent | Heartbeat;
type RunEnd = SignalOf<"run-end">;

/** What the chain needs from the world outside it. Every side effect of a run goes through here. */
export interface RunPorts {
  /** Follows the kernel past a dropped stream (`run.ts` says how, by run mode); without it a drop ends the run. */
  followDrops?: MonoTypeOperatorFunction<KernelSignal>;
  /** True for an input the thread has answered already: a kernel may still repeat it in a snapshot. */
  isAnswered?: (inputId: string) => boolean;
  /**
   * The admission's write while it is under way: nothing the kernel says is
   * told before the run is recorded. A rejection ends the run.
   */
  admission?: () => Promise<void> | undefined;
  /**
   * Writes down a task or session id the kernel announced. What comes after
   * it goes on meanwhile; the session event that carries the ids, and the
   * run's end, wait for the write (`persistIdsAside`). `undefined` when
   * there is nothing to write; a rejection (or a throw) ends the run.
   */
  persistIds: (signal: KernelSignal) => Promise<void> | undefined;
  /**
   * Makes the run's end durable before it is announced: a pause persists
   * its interrupts, an end the kernel did not settle cancels the task. May
   * answer synchronously (an observer only shows the pause).
   */
  settleAndPersistEnd: (end: RunEnd) => RunEnd | Promise<RunEnd>;
  /** Each AG-UI event the client is sent, for the thread's status read-model. */
  recordStatus?: (event: AGUIEvent) => void;
  /** A failure no stage turned into a run end (a bug, or a frame no stage could take): the run's task must not outlive it. */
  onFailure?: (error: unknown) => void;
  /** The heartbeat's timer; tests pass a virtual-time scheduler. */
  scheduler?: SchedulerLike;
  /** The clock each event's `timestamp` is read from (ms since the epoch); `Date.now` when absent. */
  now?: () => number;
  /**
   * Wraps each stage of the chain, by name (tracing, or a test that makes
   * each stage fail in turn). Absent, the chain is built without it.
   */
  instrument?: <A, B>(stage: string, operator: OperatorFunction<A, B>) => OperatorFunction<A, B>;
}

/** The stage as built, or as the `instrument` port wraps it. */
const stagesOf =
  (ports: Pick<RunPorts, "instrument">) =>
  <A, B>(stage: string, operator: OperatorFunction<A, B>): OperatorFunction<A, B> =>
    ports.instrument ? ports.instrument(stage, operator) : operator;

/** Who the run is and where its execution stands as it starts. */
export interface RunSetup {
  threadId: string;
  runId: string;
  /**
   * The run whose messages the stream shows, when it is not `runId` alone:
   * an observer shows the messages of the run it watches, under their ids,
   * and a resume under its interrupted run's id needs ids of its own
   * (`lib/model/message-ids.ts`).
   */
  messageRunId?: string;
  /** What pipeline messages are named under: the execution, so its runs go on in one message (`projectText`); the run when absent. */
  pipelineMessageScope?: string;
  /** What the client sees first: RUN_STARTED, and for an observer its session event. */
  opening: readonly AGUIEvent[];
  /** The execution's ids for the session event, and those the thread knows already; an observer announces its own in `opening`. */
  session?: SessionIdentity & { known: KnownSession };
  /** Where the execution's pipeline stands (a resumed or re-attached run goes on from there). */
  pipelineSequence: number;
  pipelineOpenSteps: readonly string[];
  /** An observer's: the steps its status snapshot shows running as it attaches (`projectSteps`' `observedOpen`). */
  observedOpenSteps?: readonly StepFacts[];
  /** Digests of the texts the client has already been shown (contract §5). */
  textSnapshotDigests: readonly string[];
  /** The error's message in the request's language, and its detail. */
  describe: ErrorDescriber;
  heartbeatMs: number;
  /** The client shows interrupts as frontend tool calls too (R-SIB-4). */
  interruptsAsTools?: boolean;
  /** Events that travel beside the run's own (an observer's thread status), merged in before delivery. */
  alongside?: Observable<AGUIEvent>;
}

/** The signal once the run is recorded, or a run end that says why it is not. */
const afterAdmissionOf =
  (admission: NonNullable<RunPorts["admission"]>) =>
  (signal: KernelSignal): KernelSignal | Promise<KernelSignal> => {
    const written = admission();
    if (written === undefined) return signal;
    return written.then(
      () => signal,
      (error: unknown): KernelSignal => ({ kind: "run-end", error: toAguiError(error, "STATE_PERSISTENCE_FAILED"), kernelSettled: false }),
    );
  };

/**
 * What the kernel said → when and how the run ends, then the ids the thread
 * must remember. The end is decided before the first asynchronous step, so
 * a drop is told from a finished run and no late error overtakes a signal.
 */
export function readKernel(
  ports: Pick<RunPorts, "followDrops" | "isAnswered" | "admission" | "persistIds" | "instrument">,
): MonoTypeOperatorFunction<KernelSignal> {
  const stage = stagesOf(ports);
  return pipe(
    stage("followDrops", ports.followDrops ?? identity),
    stage("endRunOnTaskState", endRunOnTaskState(ports.isAnswered ? { isAnswered: ports.isAnswered } : {})),
    stage(
      "persistIds",
      // Without an admission to wait for (an observer), no stage stands in for it.
      ports.admission
        ? pipe(awaitInOrder(afterAdmissionOf(ports.admission)), persistIdsAside(ports.persistIds))
        : persistIdsAside(ports.persistIds),
    ),
    stage(
      "untilRunEnd",
      takeWhile((signal: KernelSignal) => signal.kind !== "run-end", true),
    ),
  );
}

/** Pipeline envelopes → each once, as the signals and CUSTOM events they stand for, with step spans. */
export function unfoldPipeline(
  setup: Pick<RunSetup, "threadId" | "pipelineSequence" | "pipelineOpenSteps" | "observedOpenSteps">,
  ports: Pick<RunPorts, "instrument"> = {},
): OperatorFunction<KernelSignal, RunItem> {
  const stage = stagesOf(ports);
  const stages = pipeStages(
    stage("dedupePipelineEvents", dedupePipelineEvents({ cursor: setup.pipelineSequence })),
    stage("projectPipelineEvents", projectPipelineEvents({ threadId: setup.threadId })),
    stage("projectSteps", projectSteps({ durableOpen: setup.pipelineOpenSteps, observedOpen: setup.observedOpenSteps })),
  );
  // Steps to reopen are told first, so the stages are there from the start; else they join at the first item
  // they act on (any run may meet a pipeline envelope, contract §3), or at the run's end, which they stamp.
  const reopensSteps = setup.pipelineOpenSteps.length > 0 || (setup.observedOpenSteps?.length ?? 0) > 0;
  return reopensSteps ? stages : engageFrom(isPipelineItem, stages);
}

/** What the pipeline stages act on; every other item they pass as it is. */
const isPipelineItem = (item: RunItem): boolean =>
  isSignal(item) &&
  (item.kind === "pipeline-event" || item.kind === "pipeline-snapshot" || item.kind === "step" || item.kind === "run-end");

/** What the thinking, tool, artifact and usage stages act on. */
const DETAIL_KINDS = new Set<KernelSignal["kind"]>(["reasoning", "tool", "tool-progress", "artifact", "message-data", "usage"]);
const isDetailSignal = (item: RunItem): boolean => isSignal(item) && DETAIL_KINDS.has(item.kind);

/** Kernel signals → AG-UI events; each projector claims its own signals. The run end is committed before it is told. */
export function projectToAgui(
  setup: Pick<RunSetup, "threadId" | "runId" | "messageRunId" | "pipelineMessageScope" | "session" | "textSnapshotDigests" | "describe">,
  ports: Pick<RunPorts, "settleAndPersistEnd" | "instrument">,
): OperatorFunction<RunItem, AGUIEvent> {
  const { threadId, runId, describe } = setup;
  const messageRunId = setup.messageRunId ?? runId;
  const stage = stagesOf(ports);
  const settle = (item: RunItem): RunItem | Promise<RunItem> =>
    isSignal(item) && item.kind === "run-end" ? ports.settleAndPersistEnd(item) : item;
  const details: MonoTypeOperatorFunction<RunItem> = pipeStages(
    stage("projectReasoning", projectReasoning({ runId: messageRunId })),
    stage("projectTools", projectTools({ runId: messageRunId })),
    stage("projectArtifacts", projectArtifacts()),
    stage("aggregateUsage", aggregateUsage()),
  );
  return pipe(
    stage("cumulativeTextAsDeltas", cumulativeTextAsDeltas({ sessionKnown: Boolean(setup.session?.known.sessionId) })),
    stage(
      "projectText",
      projectText({ runId: messageRunId, knownDigests: new Set(setup.textSnapshotDigests), pipelineScope: setup.pipelineMessageScope }),
    ),
    // They join at the first signal one of them claims, so a run of text alone pays nothing per delta for them.
    // Each passes every other item as it is until then; the messages thinking and calls go in, `projectText` named.
    engageFrom(isDetailSignal, details),
    stage("announceSession", setup.session ? announceSession(setup.session, setup.session.known) : identity),
    stage("settleAndPersistEnd", awaitInOrder(settle)),
    stage("finishRun", finishRun({ threadId, runId, describe })),
  );
}

/**
 * AG-UI events → a well-formed stream for the SSE sink. A failure anywhere
 * before becomes the run's RUN_ERROR, its spans closed before it; one
 * after that (a bug in the last stages) still ends the run with RUN_ERROR.
 * No failure reaches the sink as an error, so none can outlive its run.
 */
export function deliver(
  setup: Pick<RunSetup, "runId" | "messageRunId" | "opening" | "describe" | "heartbeatMs" | "interruptsAsTools" | "alongside">,
  ports: Pick<RunPorts, "recordStatus" | "onFailure" | "scheduler" | "now" | "instrument">,
): OperatorFunction<AGUIEvent, SseItem> {
  // Read one by one: a spread of both objects took more time than the rest of the run's setup.
  const { describe, alongside } = setup;
  const { recordStatus, onFailure } = ports;
  const now = ports.now ?? Date.now;
  const stage = stagesOf(ports);
  const opening = openingUntilSent(setup.opening, now);
  // Stamped here: the last stages' own RUN_ERROR comes after `stampTime`.
  const runError = (error: unknown): AGUIEvent => {
    onFailure?.(error);
    return { ...runErrorEvent(toAguiError(error), describe), timestamp: Math.trunc(now()) };
  };
  const wellFormed: MonoTypeOperatorFunction<AGUIEvent> = pipe(
    stage("alongside", alongside ? (events: Observable<AGUIEvent>) => merge(alongside, events) : identity),
    // Subscribed once the opening has gone out, through every stage below, to the sink.
    opening.forgetOnceSent,
    stage("opening", openWith(opening.events)),
    stage("interruptsAsTools", setup.interruptsAsTools ? interruptsAsTools({ runId: setup.messageRunId ?? setup.runId }) : identity),
    stage("neutralizeTerminalControls", neutralizeTerminalControls()),
    endWithRunError(runError, opening.events),
    stage("closeSpans", closeSpans()),
    stage("stampTime", stampTime(now)),
  );
  return pipe(
    wellFormed,
    stage("recordStatus", recordStatus ? tapEach(recordStatus) : identity),
    stage("mergeHeartbeat", mergeHeartbeat<AGUIEvent>(setup.heartbeatMs, ports.scheduler)),
    endWithRunError<SseItem>(runError, opening.stamped),
  );
}

/**
 * The run's opening, for `openWith` and for a failure before anything went
 * out, held only until it has gone out: RUN_STARTED echoes the client's
 * input, which may be its whole conversation, and a stream may stay open
 * for as long as a turn lasts. Once the opening passed the last stage, an
 * early failure can no longer happen, so nothing reads it again.
 */
function openingUntilSent(opening: readonly AGUIEvent[], now: () => number) {
  const events = [...opening];
  const stamped: SseItem[] = opening.map((event): SseItem => ({ timestamp: Math.trunc(now()), ...event }) as AGUIEvent);
  const forgetOnceSent: MonoTypeOperatorFunction<AGUIEvent> = (source) =>
    new Observable<AGUIEvent>((subscriber) => {
      events.length = 0;
      stamped.length = 0;
      return source.subscribe(subscriber);
    });
  return { events, stamped, forgetOnceSent };
}

/** The whole run: kernel signals in, what the SSE sink writes out. */
export function runPipeline(setup: RunSetup, ports: RunPorts): OperatorFunction<KernelSignal, SseItem> {
  return pipe(readKernel(ports), unfoldPipeline(setup, ports), projectToAgui(setup, ports), deliver(setup, ports));
}
