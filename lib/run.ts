/**
 * One AG-UI run, end to end, as one RxJS pipeline: the A2A stream of the
 * kernel goes in, AG-UI events (and heartbeats) for the SSE sink come out.
 * Read the `pipe(...)` below top to bottom to see the whole run.
 */
import { EventType, type AGUIEvent } from "@ag-ui/core";
import { catchError, defer, of, pipe, startWith, tap, type Observable, type SchedulerLike } from "rxjs";
import type { A2AClient } from "./a2a/client.js";
import { contextIdFor, toSendMessageParams } from "./a2a/request-mapping.js";
import { toAguiError, type AguiError } from "./errors.js";
import { messageFor } from "./i18n/index.js";
import type { ValidRunInput } from "./validation.js";
import { aggregateUsage } from "../operators/aggregate-usage.js";
import { announceSession } from "../operators/announce-session.js";
import { closeSpans } from "../operators/close-spans.js";
import { endRunOnTaskState } from "../operators/end-run-on-task-state.js";
import { finishRun, runErrorEvent } from "../operators/finish-run.js";
import type { KernelSignal } from "../operators/kernel-signal.js";
import { mergeHeartbeat, type Heartbeat } from "../operators/merge-heartbeat.js";
import { onAbandon } from "../operators/on-abandon.js";
import { projectArtifacts } from "../operators/project-artifacts.js";
import { projectReasoning } from "../operators/project-reasoning.js";
import { projectText } from "../operators/project-text.js";
import { projectTools } from "../operators/project-tools.js";
import { toKernelSignals } from "../operators/to-kernel-signals.js";
import { unwrapStreamResponse } from "../operators/unwrap-stream-response.js";

export type SseItem = AGUIEvent | Heartbeat;

export interface RunDependencies {
  a2a: Pick<A2AClient, "sendStreamingMessage" | "cancelTask">;
  heartbeatMs: number;
  /** Tests pass a virtual-time scheduler; the heartbeat is the only timer of a run. */
  scheduler?: SchedulerLike;
  onCancelFailed?: (taskId: string, error: unknown) => void;
}

export interface RunRequest {
  input: ValidRunInput;
  /** The request's language: error messages, and `preferredLanguage` for the kernel. */
  language: string;
  executionId: string;
}

export function runAgent({ input, language, executionId }: RunRequest, deps: RunDependencies): Observable<SseItem> {
  const { threadId, runId } = input;
  const contextId = contextIdFor(threadId);
  const describe = (error: AguiError) => messageFor(error, language);

  return defer(() => {
    let taskId: string | undefined;
    // Best effort: the run's own outcome is already decided when this is called.
    const cancelTask = () => {
      if (taskId === undefined) return;
      const id = taskId;
      deps.a2a.cancelTask(id).catch((error: unknown) => deps.onCancelFailed?.(id, error));
    };
    const watchTask = (signal: KernelSignal) => {
      if (signal.kind === "task-bound") taskId ??= signal.taskId;
      // An end the kernel did not report (stream cut, kernel error) may leave the task running: no orphans.
      if (signal.kind === "run-end" && !signal.kernelSettled) cancelTask();
    };

    // A2A frames → what the kernel said, and when the run is over.
    const readKernel = pipe(
      unwrapStreamResponse(),
      toKernelSignals(),
      endRunOnTaskState(),
      tap(watchTask),
    );
    // Kernel signals → AG-UI events; each projector claims its own signals.
    const projectToAgui = pipe(
      projectText(),
      projectReasoning({ runId }),
      projectTools(),
      projectArtifacts(),
      announceSession({ threadId, runId, executionId, contextId, rosInvocationId: input.forwardedProps.iacCode.rosInvocationId }),
      aggregateUsage(),
      finishRun({ threadId, runId, describe }),
    );
    // AG-UI events → a well-formed stream for the SSE sink.
    const deliver = pipe(
      startWith<AGUIEvent>(runStarted(input)),
      catchError((error: unknown) => of(runErrorEvent(toAguiError(error), describe))),
      closeSpans(),
      mergeHeartbeat<AGUIEvent>(deps.heartbeatMs, deps.scheduler),
      onAbandon<SseItem>(cancelTask),
    );

    return deps.a2a.sendStreamingMessage(toSendMessageParams(input, { language })).pipe(readKernel, projectToAgui, deliver);
  });
}

function runStarted({ threadId, runId, parentRunId }: ValidRunInput): AGUIEvent {
  return { type: EventType.RUN_STARTED, threadId, runId, ...(parentRunId ? { parentRunId } : {}) };
}
