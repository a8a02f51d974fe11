/**
 * Emits CUSTOM `iac-code.session.v1` at most once per run (R-CUS-1): as soon
 * as both the A2A task id and the kernel session id are known (from the
 * thread, for a run that goes on with a known task, or from the stream), or
 * else, for an agent that names no session (any A2A agent but the iac-code
 * kernel), before the first thing the run has to show once the task is
 * known, or just before the run ends if the task is known by then (`null`
 * for a session the kernel never named). Known means on disk (R-PER-4): an
 * id still being written (`storing`, see `persistIdsAside`) waits, and what
 * the kernel says meanwhile is shown before it; a task stored after
 * something was shown is announced at once. A client needs its `executionId` to
 * cancel, so it should not wait for the end when the ids are there early;
 * and an event with no task names nothing it could act on, so a run that
 * failed before the kernel said anything sends none.
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

/** The ids the thread already holds as the run starts (a resume goes on with its paused task). */
export interface KnownSession {
  taskId: string | null;
  sessionId: string | null;
}

export function announceSession(
  identity: SessionIdentity,
  known: KnownSession = { taskId: null, sessionId: null },
): OperatorFunction<RunItem, RunItem> {
  // Made apart from `source`: the handlers live as long as the run's stream, and would keep the stages upstream.
  const projector = () => {
    let { taskId, sessionId } = known;
    let announced = false;
    /** Something was shown already: a task id stored after it is announced at once, not at the next thing shown. */
    let shown = false;
    /** A session id is being written: the announcement waits for it. */
    let sessionStoring = false;

    const announce = (): AGUIEvent[] => {
      announced = true;
      return [sessionEvent(identity, { taskId, sessionId })];
    };

    return (item: RunItem): RunItem | RunItem[] => {
      if (announced) return item;
      // The iac-code kernel names its session before it says anything; an agent that has not by then never will.
      if (!isSignal(item)) {
        shown = true;
        return taskId !== null ? [...announce(), item] : item;
      }
      if (item.kind === "run-end") return taskId === null ? item : [...announce(), item];
      // An id still being written is not announced: it comes again once it is on disk (`persistIdsAside`).
      if (item.kind === "task-bound" && !item.storing) taskId ??= item.taskId;
      if (item.kind === "session-bound") {
        sessionStoring = item.storing === true;
        if (!item.storing) sessionId ??= item.sessionId;
      }
      const announceable = taskId !== null && (sessionId !== null || (shown && !sessionStoring));
      return announceable ? [item, ...announce()] : item;
    };
  };
  return (source) => defer(() => source.pipe(emitEach(projector())));
}
