/**
 * Guidance runs (wire contract §10, issue 13): a user steers the thread's
 * running pipeline. A RunAgentInput with `activeGuidance: true` and
 * `runMode: "pipeline"` (a `guidanceId` and an `inputDigest` optional, as
 * the reference adapter takes them; no resume) sends its user message to
 * the task the thread's run is streaming,
 * with `guidance_id` and `input_digest` in `metadata.iac_code`, checks the
 * answer stream (no error, the bound task and context), and shows its
 * client only RUN_STARTED and RUN_FINISHED: what the guidance changes, the
 * running run streams.
 *
 * It is not a normal run: it takes no lease (it overlaps the thread's
 * active run), does not touch the execution, and ends nothing. Its run id
 * and request digest are kept all the same, for DUPLICATE_RUN_ID and
 * RUN_ID_CONFLICT, through the run that holds the thread, in order with that
 * run's own writes (a write of its own would be lost to the run's next).
 */
import { EventType, type AGUIEvent, type Interrupt } from "@ag-ui/core";
import { concat, defer, ignoreElements, of, tap, type Observable } from "rxjs";
import { endWithRunError } from "../../operators/end-with-run-error.js";
import { runErrorEvent, type ErrorDescriber } from "../../operators/finish-run.js";
import { stampTime } from "../../operators/stamp-time.js";
import { toSendMessageParams, type A2aUserPart } from "../a2a/request-mapping.js";
import type { JsonRpcResult } from "../a2a/client.js";
import { AguiError, toAguiError } from "../errors.js";
import { runStartedEvent } from "../model/run-started.js";
import { isJsonObject } from "../model/json.js";
import type { PendingInput, ThreadState } from "../state/thread-state.js";
import type { ThreadStore } from "../state/thread-store.js";
import { loadThread } from "./load-thread.js";
import type { ValidRunInput } from "../model/run-input.js";
import { sameWorkspace } from "../workspace.js";
import { requestDigest } from "./admission.js";
import type { ThreadRun } from "./thread-run.js";
import { hasPending } from "./thread-transitions.js";

/** The task a guidance run steers, as the thread's run knows it. */
export interface GuidanceTarget {
  taskId: string;
  contextId: string;
}

/** Any request that asks for guidance is one: one that cannot be (not a pipeline, or a resume) is refused, never run as a new turn. */
export const isGuidanceRun = (input: ValidRunInput): boolean => input.forwardedProps.iacCode.activeGuidance === true;

/** DUPLICATE_RUN_ID for the same request again, RUN_ID_CONFLICT for another one under a used run id. */
function checkRunId(state: ThreadState, runId: string, digest: string): void {
  const previous = state.runDigests[runId];
  if (previous === undefined) return;
  throw new AguiError(previous === digest ? "DUPLICATE_RUN_ID" : "RUN_ID_CONFLICT");
}

/** The execution a guidance run would steer is not there to steer: the reference adapter's code and message for it. */
const nothingToSteer = () => new AguiError("EXECUTION_LOST");

/**
 * The running task the guidance is for, once its run id is on record.
 * `active` is the run of this process that holds the thread, if any. As
 * the reference adapter refuses them: a resume, or a run outside pipeline
 * mode, is EXECUTION_LOST (409, never a new turn); so is a thread without
 * a run here, or whose task is not known yet or ended; one whose execution
 * waits for answers is RESUME_REQUIRED, naming them.
 */
export async function admitGuidance(
  input: ValidRunInput,
  active: ThreadRun | undefined,
  store: ThreadStore,
  toInterrupt: (pending: PendingInput) => Interrupt,
): Promise<GuidanceTarget> {
  const ext = input.forwardedProps.iacCode;
  const digest = requestDigest(input);
  // A replayed request is told DUPLICATE_RUN_ID whether or not its task still runs.
  const stored = active?.state ?? (await loadThread(store, input.threadId));
  if (stored !== undefined) checkRunId(stored, input.runId, digest);
  if (input.resume !== undefined || ext.runMode !== "pipeline") throw nothingToSteer();
  if (stored !== undefined && hasPending(stored)) {
    throw new AguiError("RESUME_REQUIRED", {}, { details: { interrupts: Object.values(stored.execution.pending).map(toInterrupt) } });
  }
  if (active === undefined) throw nothingToSteer();
  const check = (state: ThreadState): GuidanceTarget => {
    checkRunId(state, input.runId, digest);
    if (!sameWorkspace(state.cwd, ext.cwd)) throw new AguiError("THREAD_BINDING_CONFLICT", { reason: "workspace" });
    if (state.userId !== (ext.userId ?? null)) throw new AguiError("THREAD_BINDING_CONFLICT", { reason: "caller" });
    const { execution } = state;
    const ended = state.terminalExecutionIds.includes(execution.executionId);
    const running = execution.taskId !== null && !ended && !hasPending(state) && execution.rosInvocationId === ext.rosInvocationId;
    if (!running) throw nothingToSteer();
    return { taskId: execution.taskId!, contextId: state.contextId };
  };
  // Checked before the write too, so a refusal leaves the thread's queue of writes alone.
  check(active.state);
  let target: GuidanceTarget | undefined;
  const recorded = await active.recordGuidanceRun(input.runId, digest, (state) => {
    target = check(state);
  });
  if (!recorded || target === undefined) throw nothingToSteer();
  return target;
}

/** The task and context a frame of the answer stream names, where it names them. */
function idsOf(result: JsonRpcResult): { taskId?: unknown; contextId?: unknown } {
  if (!isJsonObject(result)) return {};
  const frame = result.task ?? result.statusUpdate ?? result.artifactUpdate ?? result.message;
  if (!isJsonObject(frame)) return {};
  return { taskId: result.task !== undefined ? frame.id : frame.taskId, contextId: frame.contextId };
}

export interface GuidanceDependencies {
  sendStreamingMessage: (params: unknown) => Observable<JsonRpcResult>;
  /** The user's parts as the kernel takes them (images decoded, and resized where too large). */
  userParts?: A2aUserPart[];
  language: string;
  /** The message of a RUN_ERROR, in the request's language, and its detail. */
  describe: ErrorDescriber;
  now: () => number;
  /** Told the failure a RUN_ERROR reports, for the log. */
  onFailure?: (error: AguiError) => void;
}

/**
 * RUN_STARTED, the guidance sent and its answer stream read to its end,
 * then RUN_FINISHED, every event stamped. A JSON-RPC error, a frame naming
 * another task or context, or a stream that ends without a frame is the
 * run's RUN_ERROR instead of RUN_FINISHED.
 */
export function guidanceEvents(input: ValidRunInput, target: GuidanceTarget, deps: GuidanceDependencies): Observable<AGUIEvent> {
  const { threadId, runId } = input;
  const send = defer(() => {
    const params = toSendMessageParams(input, { taskId: target.taskId, language: deps.language, userParts: deps.userParts });
    let frames = 0;
    return concat(
      deps.sendStreamingMessage(params).pipe(
        tap((result) => {
          frames++;
          const { taskId, contextId } = idsOf(result);
          if (taskId !== undefined && taskId !== target.taskId) throw new AguiError("A2A_PROTOCOL_ERROR", { reason: "taskChanged" });
          if (contextId !== undefined && contextId !== target.contextId) {
            throw new AguiError("A2A_PROTOCOL_ERROR", { reason: "contextChanged" });
          }
        }),
        ignoreElements(),
      ),
      defer(() => {
        if (frames === 0) throw new AguiError("A2A_UNAVAILABLE");
        return of<AGUIEvent>({ type: EventType.RUN_FINISHED, threadId, runId, outcome: { type: "success" } } as AGUIEvent);
      }),
    );
  });
  const runError = (error: unknown): AGUIEvent => {
    const failure = toAguiError(error);
    deps.onFailure?.(failure);
    return runErrorEvent(failure, deps.describe);
  };
  return concat(of(runStartedEvent(input)), send).pipe(endWithRunError(runError), stampTime(deps.now));
}
