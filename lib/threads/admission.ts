/**
 * Admission of a run on its thread, before the stream starts (R-ID, R-EXT-2,
 * R-RES-6). Every refusal here is an HTTP answer with the contract's status;
 * the checks run in the contract's order, and a run that passes holds the
 * thread's lease and has its run id recorded on disk. An execution a
 * stopped process left behind (neither paused nor ended) has its task
 * cancelled here, before the request starts anything (see `orphans.ts`).
 * A request under another owner's execution fence has the execution read
 * again from the kernel first (see `fence.ts`).
 */
import type { Interrupt } from "@ag-ui/core";
import { contextIdFor } from "../a2a/request-mapping.js";
import { canonicalDigest } from "../state/canonical-digest.js";
import type { PendingInput, ThreadState } from "../state/thread-state.js";
import type { PreparedWrite, ThreadLease, ThreadStore } from "../state/thread-store.js";
import { acquireThread, loadThread } from "./load-thread.js";
import { AguiError, THREAD_BUSY_RETRY_AFTER_S } from "../errors.js";
import type { ValidRunInput } from "../model/run-input.js";
import { sameWorkspace } from "../workspace.js";
import { applyExecutionFence, requestFence, type FenceDependencies } from "./fence.js";
import { recordMessageRun } from "./message-runs.js";
import { endOrphanedExecution, type OrphanDependencies } from "./orphans.js";
import { repeatedInterrupts } from "./interrupt-sizes.js";
import { endExecution, hasPending, newThreadState, pendingExpired, rotateExecution } from "./thread-transitions.js";

export interface AdmittedRun {
  /** The thread as the run starts, being written (`written`). */
  state: ThreadState;
  lease: ThreadLease;
  isResume: boolean;
  /**
   * The admission's durable write, under way: the run may call the kernel
   * meanwhile, and holds the kernel's events until it has committed (see
   * `ThreadRun`). It rejects with STATE_UNAVAILABLE; the lease is then the
   * run's to release, as on any other end.
   */
  written: Promise<void>;
}

export interface AdmissionDependencies extends OrphanDependencies, FenceDependencies {
  store: ThreadStore;
  newExecutionId: () => string;
  now: () => number;
  /**
   * Best effort, for a task parked on interrupts that expired before this
   * new turn, and for a task a stopped process left running (see orphans.ts).
   */
  cancelTask: (taskId: string) => Promise<unknown>;
  /** A pending input as the interrupt the client was shown, in the request's language: RESUME_REQUIRED names them. */
  toInterrupt: (pending: PendingInput) => Interrupt;
  /**
   * Waits, briefly and boundedly, for the thread's run while its client's
   * disconnect ends it (Stop, then send again at once); true once that run
   * let the thread go. False at once when the thread's run is not ending so.
   */
  waitForLeavingRun?: (threadId: string) => Promise<boolean>;
}

/**
 * What makes two requests "the same" for DUPLICATE_RUN_ID: the whole body
 * but its credentials (the LLM key and headers, the cloud secrets), which
 * must not reach the disk even as a digest and do not change what was asked.
 */
export function requestDigest(input: ValidRunInput): string {
  const { llmApiKey: _key, llmHeaders: _headers, alibabaCloud, ...iacCode } = input.forwardedProps.iacCode;
  const cloud = alibabaCloud ? { accessKeyId: alibabaCloud.accessKeyId, regionId: alibabaCloud.regionId } : undefined;
  return canonicalDigest({ ...input, forwardedProps: { ...input.forwardedProps, iacCode: { ...iacCode, alibabaCloud: cloud } } });
}

async function save(store: ThreadStore, state: ThreadState, lease: ThreadLease, prepared?: PreparedWrite): Promise<void> {
  try {
    await store.save(state, lease, prepared && { prepared });
  } catch (error) {
    throw new AguiError("STATE_UNAVAILABLE", {}, { cause: error });
  }
}

/**
 * Whether the run id is new, or reused by a resume under the id of the run
 * whose pause raised the pending interrupts (returns true). CopilotKit
 * resumes so, and there the id is unambiguous: it names the run the answers
 * continue. That is accepted once per pause; a request seen before is
 * DUPLICATE_RUN_ID, any other reuse RUN_ID_CONFLICT.
 */
function checkRunId(state: ThreadState | undefined, input: ValidRunInput, digest: string): boolean {
  const previous = state?.runDigests[input.runId];
  if (state === undefined || previous === undefined) return false;
  if (previous === digest || state.reusedRunDigests?.includes(digest)) throw new AguiError("DUPLICATE_RUN_ID");
  const resumesItsOwnPause = input.resume !== undefined && state.execution.interruptedRunId === input.runId && hasPending(state);
  if (!resumesItsOwnPause) throw new AguiError("RUN_ID_CONFLICT");
  return true;
}

/** The request's run id and digest on record, and its run as the one holding the execution. */
function recordRun(state: ThreadState, runId: string, digest: string, reusesRunId: boolean): ThreadState {
  if (!reusesRunId) return { ...state, runDigests: { ...state.runDigests, [runId]: digest }, execution: { ...state.execution, runId } };
  // The pause this resume answers is used up: a pause of the run it starts will offer its id again.
  const { interruptedRunId: _answered, ...execution } = state.execution;
  return { ...state, reusedRunDigests: [...(state.reusedRunDigests ?? []), digest], execution: { ...execution, runId } };
}

/** RESUME_REQUIRED, naming the interrupts to answer as the paused run's RUN_FINISHED did (abridged when large): a reloaded page learns them here. */
function resumeRequired(state: ThreadState, deps: Pick<AdmissionDependencies, "toInterrupt">): AguiError {
  const interrupts = Object.values(state.execution.pending).map(deps.toInterrupt);
  return new AguiError("RESUME_REQUIRED", {}, { details: repeatedInterrupts(interrupts) });
}

export async function admitRun(input: ValidRunInput, deps: AdmissionDependencies): Promise<AdmittedRun> {
  // A cheap look first, so a replayed request is told DUPLICATE_RUN_ID even while its run is active.
  const looking = loadThread(deps.store, input.threadId);
  // Told by the `await` below; meanwhile (or if the digest throws) it is not an unhandled rejection.
  looking.catch(() => undefined);
  // The run's write begins while the thread is read, leased and checked: its first event waits for that write.
  // Begun beside the first read, the two come back in one turn of the event loop.
  const prepared = deps.store.prepareWrite?.(input.threadId);
  try {
    // Made while the look is in the thread pool: off the way to the run's first event.
    const digest = requestDigest(input);
    checkRunId(await looking, input, digest);
    return await admitChecked(input, deps, digest, prepared);
  } catch (error) {
    // Refused: the run has no write (a save that took it over has discarded it already).
    prepared?.discard();
    throw error;
  }
}

/** `admitRun` past the cheap look; `prepared` is for the run's own write, the last step of an admission that passes. */
async function admitChecked(
  input: ValidRunInput,
  deps: AdmissionDependencies,
  digest: string,
  prepared: PreparedWrite | undefined,
): Promise<AdmittedRun> {
  const { store } = deps;
  const ext = input.forwardedProps.iacCode;
  const isResume = input.resume !== undefined;
  let lease = await acquireThread(store, input.threadId);
  if (!lease && (await deps.waitForLeavingRun?.(input.threadId))) lease = await acquireThread(store, input.threadId);
  if (!lease) throw new AguiError("THREAD_BUSY", {}, { retryAfterS: THREAD_BUSY_RETRY_AFTER_S });
  try {
    // Under the lease the file is authoritative: another run may have changed it since the first look.
    let state = await loadThread(store, input.threadId);
    const reusesRunId = checkRunId(state, input, digest);
    const userId = ext.userId ?? null;
    if (state === undefined) {
      if (isResume) throw new AguiError("EXECUTION_LOST", { reason: "unknownThread" });
      state = newThreadState({
        threadId: input.threadId,
        contextId: contextIdFor(input.threadId),
        cwd: ext.cwd,
        userId,
        rosInvocationId: ext.rosInvocationId,
        executionId: deps.newExecutionId(),
      });
      const fence = requestFence(input);
      if (fence !== undefined) state = { ...state, executionFence: fence };
    } else {
      if (!sameWorkspace(state.cwd, ext.cwd)) throw new AguiError("THREAD_BINDING_CONFLICT", { reason: "workspace" });
      if (state.userId !== userId) throw new AguiError("THREAD_BINDING_CONFLICT", { reason: "caller" });
      // Under another writer's fence the stored execution may be stale: it is read again before the rules below use it.
      const fenced = await applyExecutionFence(state, input, deps);
      state = fenced.state;
      // Kept even if the request is refused below (RESUME_REQUIRED names what the kernel showed).
      if (fenced.changed) await save(store, state, lease);
      if (isResume) {
        if (ext.rosInvocationId !== state.execution.rosInvocationId) {
          throw new AguiError("EXECUTION_LOST", { reason: "invocationMismatch" });
        }
        // A task a stopped process left running is cancelled before anything is answered on the thread.
        state = await endOrphanedExecution(state, deps);
      } else {
        state = await endOrphanedExecution(state, deps);
        if (hasPending(state)) {
          if (!pendingExpired(state, deps.now())) throw resumeRequired(state, deps);
          // R-RES-7: expired interrupts are cleared on next access, and their task cancelled.
          const taskId = state.execution.taskId;
          if (taskId) await deps.cancelTask(taskId).catch(() => undefined);
          state = endExecution(state);
        }
        state = rotateExecution(state, deps.newExecutionId(), ext.rosInvocationId);
      }
    }
    state = recordMessageRun(recordRun(state, input.runId, digest, reusesRunId), input, reusesRunId);
    // Every check is done and the lease is held: the write and the kernel call may overlap (time to the first event).
    return { state, lease, isResume, written: save(store, state, lease, prepared) };
  } catch (error) {
    await lease.release();
    throw error;
  }
}
