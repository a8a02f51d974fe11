/**
 * Emits CUSTOM `iac-code.session.v1` exactly once per run (R-CUS-1): as soon
 * as both the A2A task id and the kernel session id are known, or else just
 * before the run ends, with whatever is known then (`null` for the rest).
 * A client needs its `executionId` to cancel, so it should not wait for
 * the end when the ids are there early.
 */
import { EventType, type AGUIEvent } from "@ag-ui/core";
import { defer, type OperatorFunction } from "rxjs";
import { emitEach } from "./emit-each.js";
import { isSignal, type RunItem } from "../lib/model/kernel-signal.js";

export const SESSION_EVENT = "iac-code.session.v1";

export interface SessionIdentity {
  threadId: string;
  runId: string;
  executionId: string;
  contextId: string;
  rosInvocationId: string;
}

/** The session event: the execution's ids, and the task and kernel session once known (`null` until then). */
export function sessionEvent(
  { threadId, runId, executionId, contextId, rosInvocationId }: SessionIdentity,
  { taskId, sessionId }: { taskId: string | null; sessionId: string | null },
): AGUIEvent {
  return {
    type: EventType.CUSTOM,
    name: SESSION_EVENT,
    value: { schemaVersion: 1, threadId, aguiRunId: runId, executionId, contextId, taskId, rosInvocationId, sessionId },
  };
}

export function announceSession(identity: SessionIdentity): OperatorFunction<RunItem, RunItem> {
  return (source) =>
    defer(() => {
      let taskId: string | null = null;
      let sessionId: string | null = null;
      let announced = false;

      const announce = (): AGUIEvent[] => {
        announced = true;
        return [sessionEvent(identity, { taskId, sessionId })];
      };

      return source.pipe(
        emitEach((item): RunItem[] => {
          if (announced || !isSignal(item)) return [item];
          if (item.kind === "run-end") return [...announce(), item];
          if (item.kind === "task-bound") taskId ??= item.taskId;
          if (item.kind === "session-bound") sessionId ??= item.sessionId;
          return taskId !== null && sessionId !== null ? [item, ...announce()] : [item];
        }),
      );
    });
}
