/**
 * What the kernel says of a thread's task now (`GetTask`), as a resume and
 * an execution-fence takeover both read it: gone (the kernel does not know
 * it), ended, or live with its state and the inputs it waits on (kept
 * fields only). A task of another id or context is a protocol error; any
 * other failure (kernel out of reach) is the caller's to name.
 */
import { rpcErrorOf } from "../a2a/rpc-errors.js";
import { AguiError } from "../errors.js";
import { kernelInputsOf } from "../interrupts/keep-input.js";
import { isJsonObject } from "../model/json.js";
import type { KernelInput, TaskStateName } from "../model/kernel-signal.js";
import { newToolCallId } from "../model/tool-ids.js";
import { normalizeTaskState, signalsOf } from "../../operators/to-kernel-signals.js";
import { toA2AUpdate } from "../../operators/unwrap-stream-response.js";

/** A2A's "task not found". */
const TASK_NOT_FOUND = -32001;
const OVER = new Set<TaskStateName>(["completed", "failed", "canceled", "rejected"]);

export type TaskNow =
  { kind: "gone"; cause: AguiError } | { kind: "ended" } | { kind: "live"; state: TaskStateName; inputs: KernelInput[] };

export async function taskNow(getTask: (taskId: string) => Promise<unknown>, taskId: string, contextId: string): Promise<TaskNow> {
  let result: unknown;
  try {
    result = await getTask(taskId);
  } catch (error) {
    if (error instanceof AguiError && rpcErrorOf(error)?.code === TASK_NOT_FOUND) return { kind: "gone", cause: error };
    throw error;
  }
  if (!isJsonObject(result)) throw new AguiError("A2A_PROTOCOL_ERROR", { reason: "taskMismatch" });
  const update = toA2AUpdate(result);
  const task = update.body;
  if ((task.id !== undefined && task.id !== taskId) || (task.contextId !== undefined && task.contextId !== contextId)) {
    throw new AguiError("A2A_PROTOCOL_ERROR", { reason: "taskMismatch" });
  }
  const state = normalizeTaskState(isJsonObject(task.status) ? task.status.state : undefined);
  if (OVER.has(state)) return { kind: "ended" };
  const inputs = signalsOf(update, { newToolId: newToolCallId, findInputs: kernelInputsOf }).flatMap((signal) =>
    signal.kind === "inputs" ? signal.inputs : [],
  );
  return { kind: "live", state, inputs };
}
