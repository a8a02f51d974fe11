/**
 * One AG-UI run, end to end, as one RxJS pipeline: what the kernel says goes
 * in, AG-UI events (and heartbeats) for the SSE sink come out. Read the
 * three `pipe(...)` phases below top to bottom to see the whole run.
 */
import { EventType, type AGUIEvent } from "@ag-ui/core";
import {
  catchError,
  concat,
  defer,
  EMPTY,
  finalize,
  ignoreElements,
  of,
  pipe,
  startWith,
  takeWhile,
  tap,
  type MonoTypeOperatorFunction,
  type Observable,
  type SchedulerLike,
} from "rxjs";
import type { A2AClient } from "./a2a/client.js";
import { toSendMessageParams } from "./a2a/request-mapping.js";
import { AguiError, toAguiError } from "./errors.js";
import { messageFor } from "./i18n/index.js";
import { runCancellation } from "./threads/cancellation.js";
import { reattach } from "./threads/recovery.js";
import { resumeSignals } from "./threads/resume.js";
import type { DisconnectGrace } from "./threads/disconnect-grace.js";
import type { ThreadStatusHub } from "./threads/status-hub.js";
import type { ThreadRun } from "./threads/thread-run.js";
import type { ValidRunInput } from "./validation.js";
import { aggregateUsage } from "../operators/aggregate-usage.js";
import { announceSession } from "../operators/announce-session.js";
import { awaitInOrder } from "../operators/await-in-order.js";
import { closeSpans } from "../operators/close-spans.js";
import { continueAfterDrop } from "../operators/continue-after-drop.js";
import { dedupePipelineEvents } from "../operators/dedupe-pipeline-events.js";
import { projectPipelineEvents } from "../operators/project-pipeline-events.js";
import { projectSteps } from "../operators/project-steps.js";
import { endRunOnTaskState } from "../operators/end-run-on-task-state.js";
import { finishRun, runErrorEvent } from "../operators/finish-run.js";
import type { KernelSignal, RunItem, SignalOf } from "./model/kernel-signal.js";
import { interruptsAsTools } from "../operators/interrupts-as-tools.js";
import { mergeHeartbeat, type Heartbeat } from "../operators/merge-heartbeat.js";
import { neutralizeTerminalControls } from "../operators/neutralize-terminal-controls.js";
import { onAbandon } from "../operators/on-abandon.js";
import { projectArtifacts } from "../operators/project-artifacts.js";
import { projectReasoning } from "../operators/project-reasoning.js";
import { projectText } from "../operators/project-text.js";
import { projectTools } from "../operators/project-tools.js";
import { toKernelSignals } from "../operators/to-kernel-signals.js";
import { unwrapStreamResponse } from "../operators/unwrap-stream-response.js";

export type SseItem = AGUIEvent | Heartbeat;
export type RunA2A = Pick<
  A2AClient,
  "sendStreamingMessage" | "sendMessage" | "subscribeToTask" | "getTask" | "cancelTask" | "getPipelineState" | "listTasks"
>;

export interface RunDependencies {
  a2a: RunA2A;
  heartbeatMs: number;
  /** Tests pass a virtual-time scheduler; the heartbeat is the only timer of a run. */
  scheduler?: SchedulerLike;
  log?: (message: string, error?: unknown) => void;
  now?: () => number;
  /** The thread status read-model observers watch; the run feeds it. */
  hub?: ThreadStatusHub;
  /** A disconnect within the grace window waits there for the client to come back (R-SIB-7). */
  grace?: DisconnectGrace;
  /** Ends an execution the run left open (its grace window ran out). */
  endExecution?: (threadId: string, executionId: string) => Promise<void>;
}

export interface RunRequest {
  input: ValidRunInput;
  /** The request's language: error messages, and `preferredLanguage` for the kernel. */
  language: string;
  /** The run's hold on its thread, admitted and leased. */
  thread: ThreadRun;
  isResume: boolean;
}

export function runAgent({ input, language, thread, isResume }: RunRequest, deps: RunDependencies): Observable<SseItem> {
  const { threadId, runId } = input;
  const describe = (error: AguiError) => messageFor(error, language);
  const log = deps.log ?? (() => {});

  return defer(() => {
    const { execution } = thread.state;
    const { cancelTask, abandon } = runCancellation(thread, { ...deps, log });
    // The lease goes back before the stream ends, so the client's next request finds the thread free.
    const releaseThread = defer(() => thread.close()).pipe(ignoreElements());

    // Ids are on disk before anything after them is told (the session event carries them); a failure ends the run.
    const remember = (signal: KernelSignal): KernelSignal | Promise<KernelSignal> => {
      const written =
        signal.kind === "task-bound"
          ? thread.rememberTask(signal.taskId, signal.contextId)
          : signal.kind === "session-bound"
            ? thread.rememberSession(signal.sessionId)
            : undefined;
      if (written === undefined) return signal;
      return written.then(
        () => signal,
        (error: unknown): KernelSignal => ({
          kind: "run-end",
          error: toAguiError(error, "STATE_PERSISTENCE_FAILED"),
          kernelSettled: false,
        }),
      );
    };
    const settle = (item: RunItem): RunItem | Promise<RunItem> =>
      "kind" in item && item.kind === "run-end" ? settleRunEnd(item, thread, cancelTask) : item;

    const interruptsShownAsTools =
      (input.forwardedProps as { iacCodeDisplay?: { interruptsAsTools?: boolean } }).iacCodeDisplay?.interruptsAsTools === true;
    const kernel$: Observable<KernelSignal> = isResume
      ? resumeSignals({ input, language, thread, a2a: deps.a2a, now: deps.now ?? Date.now, interruptsAsTools: interruptsShownAsTools })
      : deps.a2a
          .sendStreamingMessage(toSendMessageParams(input, { language }))
          .pipe(unwrapStreamResponse(), toKernelSignals({ readLeadingSnapshotInputs: false }));
    // A pipeline outlives a dropped stream: re-attach to its task and go on (contract §6 recovery).
    // The task id is taken as the stream announced it: writing it down may still be under way.
    let announcedTaskId: string | undefined;
    const reattachToTask = () => {
      const taskId = announcedTaskId ?? thread.state.execution.taskId;
      return taskId ? reattach(deps.a2a, taskId, thread.state.execution.pipelineSequence) : EMPTY;
    };
    const noteTask = (signal: KernelSignal) => {
      if (signal.kind === "task-bound") announcedTaskId ??= signal.taskId;
    };
    const followDrops: MonoTypeOperatorFunction<KernelSignal> =
      input.forwardedProps.iacCode.runMode === "pipeline" ? continueAfterDrop(reattachToTask) : (signals) => signals;

    // What the kernel said → when and how the run ends, then the ids the thread must remember (a failure ends the run).
    // The end is decided before the first asynchronous step, so a drop is told from a finished run, and no late error overtakes a signal.
    const readKernel = pipe(
      tap(noteTask),
      followDrops,
      endRunOnTaskState({ isAnswered: thread.isAnswered }),
      awaitInOrder(remember),
      takeWhile((signal: KernelSignal) => signal.kind !== "run-end", true),
    );
    // Pipeline envelopes → each once, as the signals and CUSTOM events they stand for, with step spans.
    const unfoldPipeline = pipe(
      dedupePipelineEvents({ cursor: execution.pipelineSequence }),
      projectPipelineEvents({ threadId }),
      projectSteps({ durableOpen: execution.pipelineOpenSteps }),
    );
    // Kernel signals → AG-UI events; each projector claims its own signals. The run end is committed before it is told.
    const projectToAgui = pipe(
      projectText({ knownDigests: new Set(execution.textSnapshotDigests) }),
      projectReasoning({ runId }),
      projectTools(),
      projectArtifacts(),
      announceSession({
        threadId,
        runId,
        executionId: execution.executionId,
        contextId: thread.state.contextId,
        rosInvocationId: execution.rosInvocationId,
      }),
      aggregateUsage(),
      awaitInOrder(settle),
      finishRun({ threadId, runId, describe }),
    );
    // AG-UI events → a well-formed stream for the SSE sink.
    const deliver = pipe(
      startWith<AGUIEvent>(runStarted(input)),
      catchError((error: unknown) => {
        log(`run ${runId} failed in the pipeline`, error);
        return of(runErrorEvent(toAguiError(error), describe));
      }),
      interruptsShownAsTools ? interruptsAsTools() : (events) => events,
      neutralizeTerminalControls(),
      closeSpans(),
      tap((event: AGUIEvent) => deps.hub?.record(threadId, event)),
      mergeHeartbeat<AGUIEvent>(deps.heartbeatMs, deps.scheduler),
    );

    return concat(kernel$.pipe(readKernel, unfoldPipeline, projectToAgui, deliver), releaseThread).pipe(
      onAbandon<SseItem>(abandon),
      finalize(() => void thread.close().catch((error: unknown) => log(`releasing thread ${threadId} failed`, error))),
    );
  });
}

/**
 * The end of a run, made durable before it is announced: a pause persists
 * its interrupts (else the task is cancelled and the run fails,
 * R-PER-4); an end the kernel did not settle cancels the task.
 */
async function settleRunEnd(end: SignalOf<"run-end">, thread: ThreadRun, cancelTask: () => void): Promise<SignalOf<"run-end">> {
  if (!end.kernelSettled) cancelTask();
  if (end.error || !end.inputs?.length) return end;
  try {
    const { textDigests, pipelineSequence, openSteps } = end;
    return { ...end, interrupts: await thread.pause(end.inputs, { textDigests, pipelineSequence, openSteps }) };
  } catch (error) {
    cancelTask();
    await thread.end().catch(() => undefined);
    const failure =
      error instanceof AguiError && error.code === "A2A_PROTOCOL_ERROR"
        ? error
        : new AguiError("STATE_PERSISTENCE_FAILED", {}, { cause: error });
    return { ...end, inputs: undefined, error: failure };
  }
}

function runStarted({ threadId, runId, parentRunId }: ValidRunInput): AGUIEvent {
  return { type: EventType.RUN_STARTED, threadId, runId, ...(parentRunId ? { parentRunId } : {}) };
}
