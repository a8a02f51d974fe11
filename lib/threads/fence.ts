/**
 * The execution fence (issue 13, wire contract §2 and §10): a request's
 * `forwardedProps.iacCode.executionFence` names the owner of the session's
 * writes, as a handoff's target does. The kernel enforces it; this service
 * passes it on (`a2a/request-mapping.ts`) and keeps the last one a thread
 * ran under. A request under another owner means another writer (another
 * sandbox) has taken the session over: what this service remembers of the
 * execution may be stale, so it is read again from the kernel before the
 * request goes on.
 *
 * - A task the kernel does not know, or that is over: the stored execution
 *   ends, without a cancel (the task is not this service's to cancel).
 * - A task parked on inputs: the stored pending interrupts become the ones
 *   the kernel shows, through the same allowlist as a pause; an interrupt
 *   still pending keeps its expiry.
 * - A task still working: the new owner's now, so this thread's execution
 *   ends here without a cancel (on a thread's first fence it is left to the
 *   usual admission rules).
 */
import { toAguiError } from "../errors.js";
import { keepInput } from "../interrupts/keep-input.js";
import { silentLogger, type Logger } from "../log.js";
import type { KernelInput } from "../model/kernel-signal.js";
import { canonicalDigest } from "../state/canonical-digest.js";
import type { ExecutionFence, PendingInput, ThreadState } from "../state/thread-state.js";
import type { ValidRunInput } from "../model/run-input.js";
import { endExecution } from "./thread-transitions.js";
import { taskNow, type TaskNow } from "./task-now.js";

/** The A2A error for a task the kernel does not know. */
const PARKED = new Set(["input-required", "auth-required"]);

export interface FenceDependencies {
  /** Without it, a takeover is recorded but nothing is read again. */
  getTask?: (taskId: string) => Promise<unknown>;
  now: () => number;
  /** The expiry given to an interrupt the thread did not know yet; 0 for none. */
  interruptTtlS?: number;
  log?: Logger;
}

/** The request's fence as the thread keeps it; undefined when the request carries none. */
export function requestFence(input: ValidRunInput): ExecutionFence | undefined {
  const fence = input.forwardedProps.iacCode.executionFence;
  if (fence === undefined || fence === null) return undefined;
  return { version: typeof fence.version === "string" ? fence.version : null, owner: fence.owner ?? null };
}

/** Owners are compared as canonical JSON, so key order or spacing is no new owner. */
export const sameOwner = (a: ExecutionFence, b: ExecutionFence): boolean => canonicalDigest(a.owner) === canonicalDigest(b.owner);

/** The inputs a parked task shows, as `kernelInputsOf` keeps them, those of another task or context left out. */
function inputsShown(inputs: readonly KernelInput[], state: ThreadState, taskId: string): KernelInput[] {
  return inputs.filter(({ projection }) => {
    const sameTask = projection.requestTaskId === undefined || projection.requestTaskId === taskId;
    return sameTask && (projection.contextId === undefined || projection.contextId === state.contextId);
  });
}

function replacePending(state: ThreadState, inputs: KernelInput[], deps: FenceDependencies): ThreadState {
  const ttl = deps.interruptTtlS ?? 0;
  const fresh = ttl > 0 ? new Date(deps.now() + ttl * 1000).toISOString() : undefined;
  const pending: Record<string, PendingInput> = {};
  for (const { projection, sideband } of inputs) {
    const value = keepInput(projection);
    const expiresAt = state.execution.pending[value.inputId]?.expiresAt ?? fresh;
    pending[value.inputId] = { value, sideband, ...(expiresAt ? { expiresAt } : {}) };
  }
  return { ...state, execution: { ...state.execution, pending } };
}

type Reload = { state: ThreadState; outcome: "ended" | "pendingReplaced" | "handedOver" | "nothingToReload" };

/** The execution as the kernel shows it now. A kernel out of reach is A2A_UNAVAILABLE: nothing is answered on stale state. */
async function reloadExecution(state: ThreadState, deps: FenceDependencies): Promise<Reload> {
  const { taskId } = state.execution;
  const over = state.terminalExecutionIds.includes(state.execution.executionId);
  if (taskId === null || over || deps.getTask === undefined) return { state, outcome: "nothingToReload" };
  let now: TaskNow;
  try {
    now = await taskNow(deps.getTask, taskId, state.contextId);
  } catch (error) {
    throw toAguiError(error, "A2A_UNAVAILABLE");
  }
  if (now.kind !== "live") return { state: endExecution(state), outcome: "ended" };
  if (PARKED.has(now.state)) {
    const inputs = inputsShown(now.inputs, state, taskId);
    // A parked task that shows nothing to answer leaves the stored interrupts as the best knowledge there is.
    if (inputs.length > 0) return { state: replacePending(state, inputs, deps), outcome: "pendingReplaced" };
  }
  // Still working, under the writer that took the session over: the task is theirs now. This thread's
  // execution ends here without a cancel, so admission's orphan rule does not cancel another writer's task.
  return { state: endExecution(state), outcome: "handedOver" };
}

/**
 * `state` (the thread under its lease) with the request's fence recorded,
 * and its execution read again first when the fence names another owner
 * than the one stored. `changed` says whether anything but the fence moved,
 * for the caller to persist before it answers.
 */
export async function applyExecutionFence(
  state: ThreadState,
  input: ValidRunInput,
  deps: FenceDependencies,
): Promise<{ state: ThreadState; changed: boolean }> {
  const fence = requestFence(input);
  if (fence === undefined) return { state, changed: false };
  const stored = state.executionFence;
  if (stored !== undefined && sameOwner(stored, fence)) return { state: { ...state, executionFence: fence }, changed: false };
  const read = await reloadExecution(state, deps);
  // A thread's first fence proves no other writer holds a working task: the orphan rule decides, as without a fence.
  const reload: Reload = stored === undefined && read.outcome === "handedOver" ? { state, outcome: "nothingToReload" } : read;
  // A thread's first fence, with no execution to read again, is no takeover to tell of.
  if (stored === undefined && reload.outcome === "nothingToReload") return { state: { ...state, executionFence: fence }, changed: false };
  (deps.log ?? silentLogger).info(
    {
      threadId: state.threadId,
      executionId: state.execution.executionId,
      taskId: state.execution.taskId,
      fenceVersion: fence.version,
      outcome: reload.outcome,
    },
    "execution fence: another writer took the session over; the execution was read again from the kernel",
  );
  return { state: { ...reload.state, executionFence: fence }, changed: reload.state !== state };
}
