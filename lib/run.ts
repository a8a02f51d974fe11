/**
 * One AG-UI run of the service: connects the run's chain (`run-pipeline.ts`,
 * where the four phases are read top to bottom) to this run's thread, its
 * A2A client and the thread status hub. What goes in is the kernel's answer
 * to the request (a new turn's stream, or a resume's); what comes out goes
 * to the SSE sink.
 */
import { defer, EMPTY, Observable, pipe, tap, type SchedulerLike, type Subscriber } from "rxjs";
import type { JsonRpcResult, RunA2A } from "./a2a/client.js";
import { toSendMessageParams, type A2aUserPart } from "./a2a/request-mapping.js";
import type { AguiError } from "./errors.js";
import { describeError } from "./i18n/index.js";
import { errorFields, silentLogger, type Logger } from "./log.js";
import type { KernelSignal } from "./model/kernel-signal.js";
import { emptyPipelineGraph, reducePipelineGraph } from "./model/pipeline-graph.js";
import { resumedRunMessageId } from "./model/message-ids.js";
import { runStartedEvent } from "./model/run-started.js";
import { runPipeline, type RunPorts, type SseItem } from "./run-pipeline.js";
import { framesToSignals } from "./runs/fresh-run.js";
import { runCancellation } from "./threads/cancellation.js";
import { followDropOnce } from "./threads/follow-drop.js";
import { reattach } from "./threads/recovery.js";
import { resumeSignals } from "./threads/resume.js";
import { RunErrorLog } from "./threads/run-error-log.js";
import { requestDigest } from "./threads/admission.js";
import type { DisconnectGrace } from "./threads/disconnect-grace.js";
import { statusFromState, type ThreadStatusHub } from "./threads/status-hub.js";
import type { ThreadRun } from "./threads/thread-run.js";
import type { ValidRunInput } from "./model/run-input.js";
import { continueAfterDrop } from "../operators/continue-after-drop.js";
import { operate } from "./rx/operate.js";
import { readAhead } from "./rx/read-ahead.js";

export interface RunDependencies {
  a2a: RunA2A;
  heartbeatMs: number;
  /** Tests pass a virtual-time scheduler; the heartbeat is the only timer of a run. */
  scheduler?: SchedulerLike;
  /** The logger the run's records are children of; the run binds its own ids. */
  log?: Logger;
  now?: () => number;
  /** The thread status read-model observers watch; the run feeds it. */
  hub?: ThreadStatusHub;
  /** A disconnect within the grace window waits there for the client to come back (R-SIB-7). */
  grace?: DisconnectGrace;
  /** Ends an execution the run left open (its grace window ran out). */
  endExecution?: (threadId: string, executionId: string) => Promise<void>;
  /** Tests and tracing: wraps each stage of the run\'s chain (see `RunPorts.instrument`). */
  instrument?: RunPorts["instrument"];
  /**
   * Keeps the run's kernel streams unread until `write` settles (see
   * `http/flow-gate.ts`): every event after a write the run waits on is
   * held back, and what the kernel sends meanwhile must stay in TCP, not
   * pile up in the pipeline.
   */
  holdReadsDuring?: <T>(write: Promise<T>) => Promise<T>;
}

export interface RunRequest {
  input: ValidRunInput;
  /** The request's language: error messages, and `preferredLanguage` for the kernel. */
  language: string;
  /** The run's hold on its thread, admitted and leased. */
  thread: ThreadRun;
  isResume: boolean;
  /** A new turn's user message as the kernel receives it (`a2a/images.ts`), made before the stream starts. */
  userParts?: A2aUserPart[];
}

/**
 * The run's events, read once (a route's stream, or `runToEnd`). Whoever
 * holds this Observable holds it while the run lasts, so the request is
 * let go of as the run starts. It must be subscribed, if only to be left at
 * once (the sink does so for a client already gone): a new turn has called
 * the kernel by now, and leaving is what gives that request up, cancels the
 * task and gives the thread back.
 */
export function runAgent(request: RunRequest, deps: RunDependencies): Observable<SseItem> {
  let unstarted: RunRequest | undefined = request;
  let newTurnFrames = request.isResume ? undefined : sentAhead(request, deps);
  return defer(() => {
    const starting = unstarted;
    if (starting === undefined) throw new Error("a run's events are read once");
    const frames = newTurnFrames;
    unstarted = newTurnFrames = undefined;
    return startRun(starting, deps, frames);
  });
}

/**
 * A new turn's request, sent as the run is admitted (its thread held, its
 * run id decided, its admission's write under way), before its chain is
 * built and subscribed: the kernel starts answering about a millisecond
 * sooner. What it answers before the chain reads it waits in `readAhead`,
 * the kernel left unread meanwhile; the chain then holds it for the
 * admission's write as it holds any frame.
 */
function sentAhead({ input, language, userParts }: RunRequest, deps: RunDependencies): Observable<JsonRpcResult> {
  const frames$ = deps.a2a.sendStreamingMessage(toSendMessageParams(input, { language, userParts }));
  return readAhead(frames$, (read) => void deps.holdReadsDuring?.(read));
}

/**
 * The run's chain, set going. The input (a client may send the whole
 * conversation with every run) is read here as the run starts and kept by
 * nothing the run holds while its stream is open: no closure below refers
 * to it, so it is not in the scope they keep.
 */
function startRun(
  { input, language, thread, isResume }: RunRequest,
  deps: RunDependencies,
  newTurnFrames: Observable<JsonRpcResult> | undefined,
): Observable<SseItem> {
  const { threadId, runId } = input;
  const { execution } = thread.state;
  const log = (deps.log ?? silentLogger).child({ threadId, runId, executionId: execution.executionId });
  const runErrors = new RunErrorLog(log, "run", () => ({ taskId: thread.state.execution.taskId ?? undefined }));
  const { cancelTask, abandon } = runCancellation(thread, { ...deps, log });
  const held = <T>(write: Promise<T>): Promise<T> => deps.holdReadsDuring?.(write) ?? write;
  const heldIfAny = <T>(write: Promise<T> | undefined) => write && held(write);
  // The graph this run's events draw, on top of the one its paused execution kept: a pause keeps it for late views.
  let pipelineGraph = execution.pipelineGraph ?? emptyPipelineGraph();
  const interruptsShownAsTools =
    (input.forwardedProps as { iacCodeDisplay?: { interruptsAsTools?: boolean } }).iacCodeDisplay?.interruptsAsTools === true;

  const kernel$: Observable<KernelSignal> = newTurnFrames
    ? newTurnFrames.pipe(framesToSignals())
    : resumeSignals({
        input,
        language,
        thread,
        a2a: deps.a2a,
        now: deps.now ?? Date.now,
        interruptsAsTools: interruptsShownAsTools,
        holdReadsDuring: held,
      });

  // Made once, not per event: the hub asks for it only when it holds no status for the thread.
  const statusSeed = () => statusFromState(thread.state);
  const ports: RunPorts = {
    followDrops: followDropsOf(input, isResume, thread, deps.a2a),
    isAnswered: thread.isAnswered,
    // Each signal waits for the admission's write while it is under way (the kernel is left unread meanwhile).
    admission: () => heldIfAny(thread.admissionWrite),
    // The ids' own writes hold only what announces them (the session event, the run's end): the kernel is read on.
    persistIds: (signal) =>
      signal.kind === "task-bound"
        ? thread.rememberTask(signal.taskId, signal.contextId)
        : signal.kind === "session-bound"
          ? thread.rememberSession(signal.sessionId)
          : undefined,
    settleAndPersistEnd: (end) => runErrors.noteEnd(held(thread.settleEnd(end, cancelTask, pipelineGraph))),
    // The read-model observers watch is a side show: a failure to record there is logged, and the run goes on.
    // A status the hub no longer holds starts from the stored state's, so a resumed run's graph goes on from its pause.
    recordStatus: (event) => {
      try {
        pipelineGraph = reducePipelineGraph(pipelineGraph, event);
        deps.hub?.record(threadId, event, statusSeed);
      } catch (error) {
        log.warn({ ...errorFields(error), eventType: event.type }, "the thread status could not record an event");
      }
    },
    // A failure no stage turned into a run end: the run tells RUN_ERROR (logged with it), and its task must not outlive it.
    onFailure: (error) => {
      runErrors.noteFailure(error);
      cancelTask();
    },
    instrument: deps.instrument,
    scheduler: deps.scheduler,
    now: deps.now,
  };
  const run$ = kernel$.pipe(
    runPipeline(
      {
        threadId,
        runId,
        messageRunId: messageRunIdOf(input, thread),
        pipelineMessageScope: execution.executionId,
        opening: [runStartedEvent(input)],
        session: {
          threadId,
          runId,
          executionId: execution.executionId,
          contextId: thread.state.contextId,
          rosInvocationId: execution.rosInvocationId,
          // The session event tells ROS the parked execution took the answer: a resume names its ids only once the kernel accepted one.
          known: isResume ? { taskId: null, sessionId: null } : { taskId: execution.taskId, sessionId: thread.state.iacCodeSessionId },
        },
        pipelineSequence: execution.pipelineSequence,
        pipelineOpenSteps: execution.pipelineOpenSteps,
        textSnapshotDigests: execution.textSnapshotDigests,
        describe: (error: AguiError) => describeError(error, language),
        heartbeatMs: deps.heartbeatMs,
        interruptsAsTools: interruptsShownAsTools,
      },
      ports,
    ),
  );

  return endOfRun(run$, {
    logRunError: runErrors.logIfRunError,
    // The lease goes back before the stream ends, so the client's next request finds the thread free.
    release: () => thread.close(),
    abandon,
    releaseFailed: (error) => log.warn(errorFields(error), "releasing the thread failed"),
  });
}

interface RunEndHooks {
  /** Sees each item on its way out (a RUN_ERROR is logged there). */
  logRunError: (item: SseItem) => void;
  /** Gives the thread back: before the stream ends, and again (a no-op then) whenever the stream goes. */
  release: () => Promise<void>;
  /** The client left before the stream ended (R-PER-5): told after the run's source was left, before the last release. */
  abandon: () => void;
  releaseFailed: (error: unknown) => void;
}

/**
 * The run's last stage, in one subscriber: each item logged if it is a
 * RUN_ERROR; at the end, the thread released before the stream completes
 * (or errors with the release's failure); and when the subscriber leaves,
 * `abandon` if the stream had not ended, then a release in any case. As
 * `tap`, a settling stage, an abandon stage and `finalize` this took four
 * subscribers and their closures, held by every open run for as long as it
 * lasts. Written outside `startRun`, so its handlers keep only what they use.
 */
function endOfRun(items$: Observable<SseItem>, hooks: RunEndHooks): Observable<SseItem> {
  return new Observable<SseItem>((destination) => {
    const { subscriber, teardown } = endingRun(destination, hooks);
    items$.subscribe(subscriber);
    return teardown;
  });
}

/** Outside `endOfRun`, whose scope holds `items$` (the whole chain upstream) for as long as the stream is open. */
function endingRun(destination: Subscriber<SseItem>, { logRunError, release, abandon, releaseFailed }: RunEndHooks) {
  let ended = false;
  const subscriber = operate<SseItem, SseItem>({
    destination,
    next: (item) => {
      logRunError(item);
      destination.next(item);
    },
    error: (failure: unknown) => {
      ended = true;
      destination.error(failure);
    },
    complete: () =>
      void release().then(
        () => {
          ended = true;
          destination.complete();
        },
        (failure: unknown) => {
          ended = true;
          destination.error(failure);
        },
      ),
  });
  // Runs after the source was left (its subscriber came first in the destination's teardown).
  const teardown = () => {
    if (!ended) abandon();
    void release().catch(releaseFailed);
  };
  return { subscriber, teardown };
}

/**
 * How the run goes on past a dropped stream: a pipeline re-attaches with
 * the recovery route; any other new turn follows its task with GetTask and
 * SubscribeToTask alone (contract §6 "A dropped stream"); both once. A
 * resume's answer stream is followed by `resumeSignals` itself
 * (`SubscribeToTask` after its end), once already.
 */
function followDropsOf(input: ValidRunInput, isResume: boolean, thread: ThreadRun, a2a: RunA2A) {
  if (input.forwardedProps.iacCode.runMode === "pipeline") return reattachOnDrop(thread, a2a);
  return isResume ? undefined : followDropOnce(a2a, () => thread.state.execution.taskId);
}

/**
 * A pipeline outlives a dropped stream: re-attach to its task and go on
 * (contract §6 recovery). The task id is taken as the stream announced it,
 * since writing it down may still be under way.
 */
function reattachOnDrop(thread: ThreadRun, a2a: RunA2A) {
  let announcedTaskId: string | undefined;
  const reattachToTask = () => {
    const taskId = announcedTaskId ?? thread.state.execution.taskId;
    return taskId ? reattach(a2a, taskId, thread.state.execution.pipelineSequence) : EMPTY;
  };
  return pipe(
    tap((signal: KernelSignal) => {
      if (signal.kind === "task-bound") announcedTaskId ??= signal.taskId;
    }),
    continueAfterDrop(reattachToTask),
  );
}

/**
 * The run the messages are named under: this one, unless it is a resume
 * admitted under the id of the run it resumes (its request is not the one
 * on record for that id), whose messages must not join that run's.
 */
function messageRunIdOf(input: ValidRunInput, thread: ThreadRun): string {
  const answered = input.resume?.[0]?.interruptId;
  if (answered === undefined || thread.state.runDigests[input.runId] === requestDigest(input)) return input.runId;
  return resumedRunMessageId(input.runId, answered);
}
