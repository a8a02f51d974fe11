/**
 * Re-attaching to a pipeline task (R-MAP-2, contract §6 "Recovery"): what
 * the kernel's recovery route says was missed, then the task's live events.
 * Used when a pipeline resumes, after sideband answers, and when the kernel
 * stream drops mid-run.
 */
import { catchError, concat, defer, from, mergeMap, type Observable } from "rxjs";
import { AguiError } from "../errors.js";
import { rpcErrorOf } from "../a2a/rpc-errors.js";
import type { KernelSignal } from "../model/kernel-signal.js";
import { signalsOf } from "../../operators/to-kernel-signals.js";
import { toA2AUpdate } from "../../operators/unwrap-stream-response.js";
import { isJsonObject } from "../model/json.js";
import { newToolCallId } from "../model/tool-ids.js";
import type { RunA2A } from "../a2a/client.js";
import { kernelInputsOf } from "../interrupts/keep-input.js";

/**
 * `GET <a2a>/iac-code/pipeline/state?taskId&afterSequence` → one snapshot
 * signal, then each missed envelope (marked recovered, so dedupe applies
 * the recovery rule). A 404 (no pipeline) gives nothing.
 */
export function recoveredPipeline(a2a: Pick<RunA2A, "getPipelineState">, taskId: string, afterSequence: number): Observable<KernelSignal> {
  return defer(async (): Promise<KernelSignal[]> => {
    const state = await a2a.getPipelineState(taskId, afterSequence);
    if (!isJsonObject(state) || !isJsonObject(state.snapshot)) return [];
    const events = Array.isArray(state.events) ? state.events.filter(isJsonObject) : [];
    return [
      { kind: "pipeline-snapshot", snapshot: state.snapshot },
      ...events.map((envelope): KernelSignal => ({ kind: "pipeline-event", envelope, recovered: true })),
    ];
  }).pipe(mergeMap((signals) => signals));
}

/**
 * The task as `GetTask` tells it now, as signals, less its text (the client
 * has it) and its pipeline events (the recovery route tells what was missed).
 */
async function taskSignalsNow(a2a: Pick<RunA2A, "getTask">, taskId: string): Promise<KernelSignal[]> {
  const task = toA2AUpdate(await a2a.getTask(taskId));
  return signalsOf(task, { newToolId: newToolCallId, findInputs: kernelInputsOf }).filter(
    (signal) => signal.kind !== "text" && signal.kind !== "pipeline-event",
  );
}

/**
 * The task as it is now (`GetTask`), what the pipeline missed, then the
 * task's live events (`SubscribeToTask`) unless `GetTask` showed it already
 * settled. The snapshot's text is never replayed: the client has it.
 */
export function reattach(a2a: RunA2A, taskId: string, afterSequence: number): Observable<KernelSignal> {
  return defer(async () => {
    const now = await taskSignalsNow(a2a, taskId);
    // The missed pipeline events come before the task's present state, which may end the run.
    return concat(
      from(now.filter((signal) => signal.kind !== "task-state" && signal.kind !== "inputs")),
      recoveredPipeline(a2a, taskId, afterSequence),
      from(now.filter((signal) => signal.kind === "task-state" || signal.kind === "inputs")),
      defer(() => liveEvents(a2a, taskId)),
    );
  }).pipe(mergeMap((signals) => signals));
}

/**
 * `reattach` for a task with no pipeline (a run outside pipeline mode, any
 * agent): the task as it is now, less its text, then its live events unless
 * it already settled. No recovery route is asked.
 */
export function followTask(a2a: Pick<RunA2A, "getTask" | "subscribeToTask">, taskId: string): Observable<KernelSignal> {
  return defer(async () =>
    concat(
      from(await taskSignalsNow(a2a, taskId)),
      defer(() => liveEvents(a2a, taskId)),
    ),
  ).pipe(mergeMap((signals) => signals));
}

/** A2A 1.0's answer to `SubscribeToTask` on a task already terminal: it fails before any event. */
const UNSUPPORTED_OPERATION = -32004;

/**
 * `SubscribeToTask`, less the text of the Task snapshot it opens with. A
 * task that settled after the `GetTask` before this call (an observer or a
 * re-attach arriving as the answer ends) is refused by a 1.0 kernel as
 * terminal: it ends as `GetTask` now tells it, not with an error.
 */
export function liveEvents(a2a: Pick<RunA2A, "subscribeToTask" | "getTask">, taskId: string): Observable<KernelSignal> {
  let first = true;
  return a2a.subscribeToTask(taskId).pipe(
    mergeMap((frame) => {
      const update = toA2AUpdate(frame);
      const signals = signalsOf(update, { newToolId: newToolCallId, findInputs: kernelInputsOf });
      const fresh = first && update.kind === "task" ? signals.filter((signal) => signal.kind !== "text") : signals;
      first = false;
      return fresh;
    }),
    catchError((error: unknown) => {
      if (first && error instanceof AguiError && rpcErrorOf(error)?.code === UNSUPPORTED_OPERATION)
        return from(taskSignalsNow(a2a, taskId)).pipe(mergeMap((signals) => signals));
      throw error;
    }),
  );
}
