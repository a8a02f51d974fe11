/**
 * A run that opens a thread no one knew before and stores nothing: the
 * kernel's ids unknown, its pipeline at the start, a pause's interrupts
 * shown and forgotten. The sandbox replay runs a recording this way, and so
 * does the in-memory chain of the specs and the bench
 * (`lib/testing/projection-chain.ts`); a service run reads a new turn's
 * stream with the same `framesToSignals`.
 */
import { EventType } from "@ag-ui/core";
import type { OperatorFunction } from "rxjs";
import type { JsonRpcResult } from "../a2a/client.js";
import { kernelInputsOf, keepInput } from "../interrupts/keep-input.js";
import { toInterrupt } from "../interrupts/to-interrupt.js";
import type { KernelSignal, SignalOf } from "../model/kernel-signal.js";
import type { RunSetup } from "../run-pipeline.js";
import { resultsToKernelSignals } from "../../operators/to-kernel-signals.js";

/** The kernel's JSON-RPC results → kernel signals, as a new turn's stream is read. */
export function framesToSignals(): OperatorFunction<JsonRpcResult, KernelSignal> {
  return resultsToKernelSignals({ findInputs: kernelInputsOf, readLeadingSnapshotInputs: false });
}

/** A pause's end with its inputs shown as interrupts, stored nowhere (the spec's in-memory thread shows them so too). */
export function withInterruptsShown(end: SignalOf<"run-end">, language: string): SignalOf<"run-end"> {
  if (end.error || !end.inputs?.length) return end;
  return {
    ...end,
    interrupts: end.inputs.map(({ projection, sideband }) => toInterrupt({ value: keepInput(projection), sideband }, language)),
  };
}

/** The execution ids a fresh run announces in its session event. */
export type FreshRunIds = Omit<NonNullable<RunSetup["session"]>, "known">;

/**
 * The setup of a run that opens a thread and an execution no one knew
 * before: the kernel's ids unknown, its pipeline at the start (the
 * spec's in-memory chain may start it elsewhere).
 */
export function freshRunSetup(
  ids: FreshRunIds,
  rest: Pick<RunSetup, "describe" | "heartbeatMs"> &
    Partial<Pick<RunSetup, "pipelineSequence" | "pipelineOpenSteps" | "textSnapshotDigests" | "interruptsAsTools">>,
): RunSetup {
  const { threadId, runId } = ids;
  return {
    threadId,
    runId,
    opening: [{ type: EventType.RUN_STARTED, threadId, runId }],
    session: { ...ids, known: { taskId: null, sessionId: null } },
    pipelineSequence: 0,
    pipelineOpenSteps: [],
    textSnapshotDigests: [],
    ...rest,
  };
}
