/**
 * Read-only observation of an execution (contract §10, R-SIB-5): an AG-UI
 * stream of its own — RUN_STARTED, the session event, the thread's status
 * as STATE_SNAPSHOT then STATE_DELTA, and the task's events from its own
 * `GetTask` + recovery + `SubscribeToTask` — ending like a run at the first
 * pause or settled state. It takes no lease and never cancels: observers
 * come and go without touching the run, and each reads the kernel on its
 * own connection, so a slow one slows nobody else.
 */
import { EventType, type AGUIEvent, type Interrupt } from "@ag-ui/core";
import { concat, map, merge, of, pipe, type Observable, type SchedulerLike } from "rxjs";
import type { AguiError } from "../errors.js";
import { messageFor } from "../i18n/index.js";
import { keepInput } from "../interrupts/keep-input.js";
import { toInterrupt } from "../interrupts/to-interrupt.js";
import type { RunA2A, SseItem } from "../run.js";
import type { ThreadState } from "../state/thread-state.js";
import { aggregateUsage } from "../../operators/aggregate-usage.js";
import { SESSION_EVENT } from "../../operators/announce-session.js";
import { closeSpans } from "../../operators/close-spans.js";
import { dedupePipelineEvents } from "../../operators/dedupe-pipeline-events.js";
import { endRunOnTaskState } from "../../operators/end-run-on-task-state.js";
import { finishRun } from "../../operators/finish-run.js";
import type { KernelInput, RunItem } from "../model/kernel-signal.js";
import { mergeHeartbeat } from "../../operators/merge-heartbeat.js";
import { neutralizeTerminalControls } from "../../operators/neutralize-terminal-controls.js";
import { projectArtifacts } from "../../operators/project-artifacts.js";
import { projectPipelineEvents } from "../../operators/project-pipeline-events.js";
import { projectReasoning } from "../../operators/project-reasoning.js";
import { projectSteps } from "../../operators/project-steps.js";
import { projectText } from "../../operators/project-text.js";
import { projectTools } from "../../operators/project-tools.js";
import { toStateEvents } from "../../operators/to-state-events.js";
import { reattach } from "./recovery.js";
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
}

export function observeExecution(
  { state, runId, afterSequence, language }: ObserveRequest,
  deps: ObserveDependencies,
): Observable<SseItem> {
  const { threadId, execution } = state;
  const describe = (error: AguiError) => messageFor(error, language);
  // The interrupts the thread keeps are the ones a client can answer; a pause seen only live is shown as the kernel sent it.
  const interruptsFor = (inputs: readonly KernelInput[]): Interrupt[] => {
    const stored = Object.values(state.execution.pending);
    if (stored.length > 0) return stored.map((pending) => toInterrupt(pending, language));
    return inputs.map(({ projection, sideband }) => toInterrupt({ value: keepInput(projection), sideband }, language));
  };
  // Nothing to write: an observer only shows the pause, so this stays synchronous.
  const pause = (item: RunItem): RunItem =>
    "kind" in item && item.kind === "run-end" && !item.error && item.inputs?.length
      ? { ...item, interrupts: interruptsFor(item.inputs) }
      : item;

  const taskEvents = reattach(deps.a2a, execution.taskId!, afterSequence).pipe(
    endRunOnTaskState(),
    pipe(
      dedupePipelineEvents({ cursor: afterSequence }),
      projectPipelineEvents({ threadId }),
      projectSteps({ durableOpen: execution.pipelineOpenSteps }),
    ),
    pipe(
      projectText(),
      projectReasoning({ runId }),
      projectTools(),
      projectArtifacts(),
      aggregateUsage(),
      map(pause),
      finishRun({ threadId, runId, describe }),
    ),
  );
  const status = deps.hub.watch(threadId, () => statusFromState(state)).pipe(toStateEvents());
  const opening: AGUIEvent[] = [
    { type: EventType.RUN_STARTED, threadId, runId },
    {
      type: EventType.CUSTOM,
      name: SESSION_EVENT,
      value: {
        schemaVersion: 1,
        threadId,
        aguiRunId: runId,
        executionId: execution.executionId,
        contextId: state.contextId,
        taskId: execution.taskId,
        rosInvocationId: execution.rosInvocationId,
        sessionId: state.iacCodeSessionId,
      },
    },
  ];

  // The status subscribes first, so its snapshot comes right after the opening events.
  return concat(of(...opening), merge(status, taskEvents)).pipe(
    neutralizeTerminalControls(),
    closeSpans(),
    mergeHeartbeat<AGUIEvent>(deps.heartbeatMs, deps.scheduler),
  );
}
