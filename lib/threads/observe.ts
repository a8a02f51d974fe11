/**
 * Read-only observation of an execution (contract §10, R-SIB-5): an AG-UI
 * stream of its own — RUN_STARTED, the session event, the thread's status
 * as STATE_SNAPSHOT then STATE_DELTA, and the task's events from its own
 * `GetTask` + recovery + `SubscribeToTask` — ending like a run at the first
 * pause or settled state. It takes no lease and never cancels: observers
 * come and go without touching the run, and each reads the kernel on its
 * own connection, so a slow one slows nobody else.
 *
 * It is the run's own chain (`run-pipeline.ts`) with ports that write
 * nothing: no ids are persisted, a pause is only shown, and the status hub
 * is read, never fed. Its messages carry the ids the run holding the
 * execution gives them (`execution.runId`), so a client that drove that run
 * and comes back as an observer goes on with the messages it has.
 *
 * Before anything live it reads the thread's conversation from the kernel
 * (`a2a/history-messages.ts`) and shows it as MESSAGES_SNAPSHOT, after the
 * status snapshot: a client that reloaded its page, or attached late, has
 * the whole exchange, and the live text goes on from it. An execution that
 * has ended has nothing live: the stream ends there. The last status it
 * shows says the run is no longer active (`settle-status.ts`).
 *
 * The status's pipeline graph is handed over at attach and then kept
 * current by the stream's own events (`keep-pipeline-graph.ts`): a view
 * that attaches late, or to an execution no run feeds, draws the graph a
 * view that watched from the start has. The steps that graph shows
 * running are reopened right after it, so a step that started before the
 * observer came still finishes on its stream, in front of any kernel: one
 * with no recovery route replays nothing of what came before.
 */
import { EventType, PROTOCOL_VERSION, type Interrupt } from "@ag-ui/core";
import {
  catchError,
  EMPTY,
  finalize,
  from,
  map,
  merge,
  mergeMap,
  of,
  shareReplay,
  switchMap,
  take,
  type Observable,
  type SchedulerLike,
} from "rxjs";
import { HistoryReads } from "../a2a/history-budget.js";
import { conversationEvents, readConversation } from "../a2a/history-messages.js";
import type { AguiError } from "../errors.js";
import { describeError } from "../i18n/index.js";
import { keepInput } from "../interrupts/keep-input.js";
import { toInterrupt } from "../interrupts/to-interrupt.js";
import { silentLogger, type Logger } from "../log.js";
import type { KernelInput, KernelSignal } from "../model/kernel-signal.js";
import { runningStepFacts } from "../model/open-steps.js";
import type { StepFacts } from "../model/step-facts.js";
import { reduceThreadStatus, type ThreadStatus } from "../model/thread-status.js";
import type { RunA2A } from "../a2a/client.js";
import { runPipeline, type SseItem } from "../run-pipeline.js";
import type { ThreadState } from "../state/thread-state.js";
import { sessionEvent } from "../../operators/announce-session.js";
import { keepPipelineGraphCurrent } from "../../operators/keep-pipeline-graph.js";
import { settleStatus } from "../../operators/settle-status.js";
import { toStateEvents } from "../../operators/to-state-events.js";
import { messageRunIndex } from "./message-runs.js";
import { withPendingToolCalls } from "./pending-tool-calls.js";
import { reattach } from "./recovery.js";
import { RunErrorLog } from "./run-error-log.js";
import { statusFromState, type ThreadStatusHub } from "./status-hub.js";

export interface ObserveRequest {
  state: ThreadState;
  /** The observer stream's own run id. */
  runId: string;
  afterSequence: number;
  language: string;
}

export interface ObserveDependencies {
  a2a: RunA2A;
  hub: ThreadStatusHub;
  heartbeatMs: number;
  scheduler?: SchedulerLike;
  /** The logger the observer's records are children of; it binds its own ids. */
  log?: Logger;
  /** What reading conversations back may cost in this process (`a2a/history-budget.ts`). */
  historyReads?: HistoryReads;
}

/** Where the observer's status snapshot stands as it attaches. */
interface AttachPoint {
  /** The steps its graph shows running; undefined when it has no graph. */
  observedOpenSteps: readonly StepFacts[] | undefined;
  /** The pipeline sequence it has in it. */
  sequence: number;
}

/** Without a process's own limits: unbounded, as a test's observer reads. */
const unboundedReads = () => new HistoryReads({ requestBytes: Number.MAX_SAFE_INTEGER, processBytes: Number.MAX_SAFE_INTEGER });

export function observeExecution(
  { state, runId, afterSequence, language }: ObserveRequest,
  deps: ObserveDependencies,
): Observable<SseItem> {
  const { threadId, execution } = state;
  const log = (deps.log ?? silentLogger).child({ threadId, runId, executionId: execution.executionId, taskId: execution.taskId });
  const runErrors = new RunErrorLog(log, "observer");
  // The interrupts the thread keeps are the ones a client can answer; a pause seen only live is shown as the kernel sent it.
  const interruptsFor = (inputs: readonly KernelInput[]): Interrupt[] => {
    const stored = Object.values(state.execution.pending);
    if (stored.length > 0) return stored.map((pending) => toInterrupt(pending, language));
    return inputs.map(({ projection, sideband }) => toInterrupt({ value: keepInput(projection), sideband }, language));
  };
  const identity = {
    threadId,
    runId,
    executionId: execution.executionId,
    contextId: state.contextId,
    rosInvocationId: execution.rosInvocationId,
  };

  // The messages are those of the run holding the execution: a client that watched it, or drove it, has them under these ids.
  const messageRunId = execution.runId ?? runId;
  const { taskId } = execution;
  // One watch for the snapshot and for the wait below: a hub shared between instances answers after a Redis round trip.
  const status$ = deps.hub.watch(threadId, () => statusFromState(state)).pipe(shareReplay({ bufferSize: 1, refCount: true }));
  // Read once for both uses below, once the status snapshot is out: nothing live starts before both are in, and a failure
  // to read it ends the stream. Messages are named as the live streams named them (the watched task's unmarked start as
  // its run's), so the live text goes on in them and a page that kept them merges without a change.
  const reads = deps.historyReads ?? unboundedReads();
  const charge = reads.charge();
  const naming = {
    runs: messageRunIndex(state.messageRuns),
    runOfTask: (messageTaskId: string) => (messageTaskId === taskId ? messageRunId : undefined),
  };
  const conversation$ = status$.pipe(
    take(1),
    switchMap(() => readConversation(deps.a2a, state.contextId, { naming, reads, charge })),
    switchMap(async (conversation) => ({
      ...conversation,
      messages: withPendingToolCalls(conversation.messages, Object.values(execution.pending), messageRunId),
    })),
    shareReplay(1),
  );
  const ended: KernelSignal = { kind: "run-end", error: undefined, kernelSettled: true };
  const kernel$ = conversation$.pipe(switchMap(() => (taskId === null ? of(ended) : reattach(deps.a2a, taskId, afterSequence))));

  const observe = ({ observedOpenSteps, sequence }: AttachPoint) =>
    kernel$.pipe(
      runPipeline(
        {
          threadId,
          runId,
          messageRunId,
          pipelineMessageScope: execution.executionId,
          opening: [
            { type: EventType.RUN_STARTED, threadId, runId, protocolVersion: PROTOCOL_VERSION },
            sessionEvent(identity, { taskId: execution.taskId, sessionId: state.iacCodeSessionId }),
          ],
          // The kernel is asked for what came after `afterSequence` (recovered envelopes are told apart by their ids); a live
          // envelope the status snapshot has in it already is not shown again.
          pipelineSequence: Math.max(afterSequence, sequence),
          pipelineOpenSteps: observedOpenSteps === undefined ? execution.pipelineOpenSteps : [],
          observedOpenSteps: observedOpenSteps ?? [],
          // The observer's client has seen none of the task's text.
          textSnapshotDigests: [],
          describe: (error: AguiError) => describeError(error, language),
          heartbeatMs: deps.heartbeatMs,
          // The status subscribes first, so its snapshot comes right after the opening events.
          alongside: merge(
            status$.pipe(toStateEvents()),
            conversation$.pipe(
              mergeMap((conversation) => from(conversationEvents(conversation))),
              catchError(() => EMPTY),
            ),
          ),
        },
        {
          persistIds: () => undefined,
          // Nothing to write: an observer only shows the pause, so this stays synchronous.
          settleAndPersistEnd: (end) =>
            runErrors.noteEnd(!end.error && end.inputs?.length ? { ...end, interrupts: interruptsFor(end.inputs) } : end),
          onFailure: runErrors.noteFailure,
          scheduler: deps.scheduler,
        },
      ),
    );

  // The steps open as the observer attaches are the ones its status snapshot's graph shows running, reopened at once so
  // that their finishes close spans this stream has. The execution's own record of them is written only at a pause: it
  // stands in when no run feeds a graph (a paused execution, after a restart).
  const attachPoint$ = status$.pipe(
    take(1),
    map(({ pipelineGraph, pipeline }): AttachPoint => ({
      observedOpenSteps: pipelineGraph.steps.length > 0 ? runningStepFacts(pipelineGraph) : undefined,
      sequence: pipeline.sequence,
    })),
    // A status that fails says so on the stream, as the run's error.
    catchError(() => of<AttachPoint>({ observedOpenSteps: undefined, sequence: 0 })),
  );
  return attachPoint$.pipe(
    switchMap(observe),
    // The graph follows the events this stream shows, not the status source: it may not be fed at all (docs/pipeline-feed.md).
    keepPipelineGraphCurrent<SseItem>(),
    settleStatus<ThreadStatus, SseItem>(reduceThreadStatus),
    runErrors.logEach(),
    // What the snapshot holds is held until the stream ends (the read is shared with the live part).
    finalize(() => charge.release()),
  );
}
