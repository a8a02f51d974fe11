/**
 * Decides when and how the run ends, from the task state alone (A2A 1.0 has
 * no `final` flag). Signals pass through; the first settled state becomes a
 * `run-end` signal and completes the stream, which also closes the
 * upstream SSE:
 *
 *   inputs not yet answered     → run-end with those inputs (an interrupt), at any state
 *   completed, input-required   → run-end (success)
 *   canceled                    → run-end CANCELLED
 *   failed, rejected, auth-req. → run-end A2A_EXECUTION_FAILED (detail: the status message's text)
 *   stream ends while working   → run-end A2A_EXECUTION_FAILED (kernel not settled)
 *   upstream error              → run-end with that error (kernel not settled)
 *   a run-end from the source   → passed on as the end
 *
 *   -s-w-c|        → -s-w-(c E|)
 *   -s-w-|         → -s-w-(E|)
 */
import type { OperatorFunction, Subscriber } from "rxjs";
import { AguiError, toAguiError, type MessageParams } from "../lib/errors.js";
import { operate, operatorOf } from "../lib/rx/operate.js";
import type { KernelInput, KernelSignal, TaskStateName } from "../lib/model/kernel-signal.js";

const SUCCESS_STATES = new Set<TaskStateName>(["completed", "input-required"]);
const FAILURE_STATES = new Set<TaskStateName>(["failed", "rejected", "auth-required"]);

/** A kernel's reason is its own words, shown as the RUN_ERROR's detail: bounded as the kernel's JSON-RPC messages are. */
const MAX_REASON_CHARS = 500;

function endFor(state: TaskStateName, reason: string | undefined): KernelSignal | undefined {
  if (SUCCESS_STATES.has(state)) return { kind: "run-end", error: undefined, kernelSettled: true };
  if (state === "canceled") return { kind: "run-end", error: new AguiError("CANCELLED"), kernelSettled: true };
  if (FAILURE_STATES.has(state)) {
    const params: MessageParams = reason === undefined ? { state } : { state, detail: reason.slice(0, MAX_REASON_CHARS) };
    return { kind: "run-end", error: new AguiError("A2A_EXECUTION_FAILED", params), kernelSettled: true };
  }
  return undefined;
}

export interface EndRunOptions {
  /** True for an input the thread already answered: a kernel may still repeat it in a snapshot. */
  isAnswered?: (inputId: string) => boolean;
}

const inputIdOf = (input: KernelInput) => (typeof input.projection.inputId === "string" ? input.projection.inputId : "");

export function endRunOnTaskState({ isAnswered = () => false }: EndRunOptions = {}): OperatorFunction<KernelSignal, KernelSignal> {
  return operatorOf((destination: Subscriber<KernelSignal>) => endingOnTaskState(destination, isAnswered));
}

/**
 * Outside `endRunOnTaskState`'s `(source) => …`: the handlers live as long
 * as the run's stream, and keep only what they use, not the stages upstream.
 */
function endingOnTaskState(destination: Subscriber<KernelSignal>, isAnswered: (inputId: string) => boolean): Subscriber<KernelSignal> {
  const end = (signal: KernelSignal) => {
    destination.next(signal);
    destination.complete();
  };
  // Once the run ended, `operate` leaves the source and reads nothing more of it, a synchronous one included.
  return operate({
    destination,
    next: (signal) => {
      // A source may decide the end itself (a resume refused before anything was sent).
      if (signal.kind === "run-end") return end(signal);
      if (signal.kind === "inputs") {
        const inputs = signal.inputs.filter((input) => !isAnswered(inputIdOf(input)));
        if (inputs.length > 0) end({ kind: "run-end", error: undefined, kernelSettled: true, inputs });
        return;
      }
      destination.next(signal);
      const settled = signal.kind === "task-state" ? endFor(signal.state, signal.reason) : undefined;
      if (settled) end(settled);
    },
    error: (error: unknown) => end({ kind: "run-end", error: toAguiError(error, "A2A_UNAVAILABLE"), kernelSettled: false }),
    complete: () => end({ kind: "run-end", error: new AguiError("A2A_EXECUTION_FAILED", { state: "working" }), kernelSettled: false }),
  });
}
