/**
 * One observer path with two addressings (contract §10): a client names the
 * thread alone (connect: a page after a reload, CopilotKit-style
 * `connectAgent()`), or an execution of it (subscribe: a watcher that knows
 * which one, optionally which run and invocation, and from which pipeline
 * sequence). Both are the same observer stream (`threads/observe.ts`),
 * kept alive within the grace window while its client watches.
 *
 * They differ only where the addressing does: a thread the service does not
 * know attaches to an empty conversation (a page may connect before its
 * first message), while an execution that is not the thread's current one
 * is refused.
 */
import { randomUUID } from "node:crypto";
import { EventType, PROTOCOL_VERSION, type AGUIEvent } from "@ag-ui/core";
import { from, type Observable } from "rxjs";
import type { RunA2A } from "../a2a/client.js";
import type { HistoryReads } from "../a2a/history-budget.js";
import { messagesSnapshot } from "../a2a/history-messages.js";
import { AguiError } from "../errors.js";
import type { Logger } from "../log.js";
import { initialThreadStatus } from "../model/thread-status.js";
import type { SseItem } from "../run-pipeline.js";
import type { ThreadState } from "../state/thread-state.js";
import type { ThreadStore } from "../state/thread-store.js";
import type { DisconnectGrace } from "../threads/disconnect-grace.js";
import { loadThread } from "../threads/load-thread.js";
import { observeExecution } from "../threads/observe.js";
import type { ThreadStatusHub } from "../threads/status-hub.js";
import { watchWithinGrace } from "../threads/watch-within-grace.js";

/** What an observer names: its thread, and for a subscribe the execution (the rest of its body narrows it). */
export interface ObserveTarget {
  threadId: string;
  executionId?: string;
  runId?: string;
  rosInvocationId?: string;
  /** The pipeline sequence the observer has seen up to; the thread's own when absent. */
  afterSequence?: number;
}

export interface ObserveTargetDependencies {
  store: ThreadStore;
  a2a: RunA2A;
  hub: ThreadStatusHub;
  grace: DisconnectGrace;
  endExecution: (threadId: string, executionId: string) => Promise<void>;
  heartbeatMs: number;
  language: string;
  log: Logger;
  historyReads?: HistoryReads;
}

export async function observeTarget(target: ObserveTarget, deps: ObserveTargetDependencies): Promise<Observable<SseItem>> {
  const { threadId } = target;
  const byExecution = target.executionId !== undefined;
  const state = await loadThread(deps.store, threadId);
  if (byExecution) checkExecution(state, target);
  // A subscribe that names the run it watches is told that run id back, as the reference adapter echoes it.
  const runId = byExecution && target.runId !== undefined ? target.runId : `${byExecution ? "observe" : "connect"}-${randomUUID()}`;
  if (state === undefined) return unknownThread(threadId, runId);
  const { execution } = state;
  const observed$ = observeExecution(
    { state, runId, afterSequence: target.afterSequence ?? execution.pipelineSequence, language: deps.language },
    { a2a: deps.a2a, hub: deps.hub, heartbeatMs: deps.heartbeatMs, log: deps.log, historyReads: deps.historyReads },
  );
  if (execution.taskId === null) return observed$;
  const log = deps.log.child({ threadId, executionId: execution.executionId });
  const { grace, endExecution } = deps;
  return watchWithinGrace(observed$, { threadId, executionId: execution.executionId, grace, endExecution, log });
}

/** The execution a subscribe names must be the thread's current one, with a task to watch. */
function checkExecution(state: ThreadState | undefined, target: ObserveTarget): asserts state is ThreadState {
  if (!state) throw new AguiError("EXECUTION_NOT_FOUND", { reason: "checkpoint" });
  const { execution } = state;
  const known =
    execution.executionId === target.executionId &&
    (target.rosInvocationId === undefined || target.rosInvocationId === execution.rosInvocationId) &&
    (target.runId === undefined || target.runId in state.runDigests);
  if (!known) throw new AguiError("OBSERVATION_CONFLICT");
  if (execution.taskId === null) throw new AguiError("EXECUTION_NOT_FOUND", { reason: "checkpoint" });
}

/** A thread with no state: the stream of an empty conversation, at rest. */
function unknownThread(threadId: string, runId: string): Observable<AGUIEvent> {
  const timestamp = Date.now();
  return from<AGUIEvent[]>([
    { type: EventType.RUN_STARTED, threadId, runId, protocolVersion: PROTOCOL_VERSION, timestamp },
    { type: EventType.STATE_SNAPSHOT, snapshot: initialThreadStatus(threadId), timestamp },
    { ...messagesSnapshot([]), timestamp },
    { type: EventType.RUN_FINISHED, threadId, runId, outcome: { type: "success" }, timestamp },
  ]);
}
