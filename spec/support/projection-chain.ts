/**
 * The operator chain of `lib/run.ts`, in the same order, with the thread's
 * I/O replaced by in-memory stand-ins: what the property tests feed random
 * kernel streams through, and what `npm run bench` times. `runAgent` itself
 * needs a live thread (leases, files) and an A2A client; everything between
 * the kernel's frames and the SSE sink is here, operator for operator.
 *
 * `RUN_PIPELINE_STAGES` names the stages as `lib/run.ts` writes them; a spec
 * (`spec/properties/projection-chain.spec.ts`) reads `lib/run.ts` and fails
 * when the two disagree, so this copy cannot drift silently.
 */
import { EventType, type AGUIEvent } from "@ag-ui/core";
import { catchError, of, pipe, startWith, takeWhile, tap, type Observable, type OperatorFunction, type SchedulerLike } from "rxjs";
import { AguiError, toAguiError } from "../../lib/errors.js";
import { messageFor } from "../../lib/i18n/index.js";
import { keepInput } from "../../lib/interrupts/keep-input.js";
import { toInterrupt } from "../../lib/interrupts/to-interrupt.js";
import type { JsonRpcResult } from "../../lib/a2a/client.js";
import { aggregateUsage } from "../../operators/aggregate-usage.js";
import { announceSession } from "../../operators/announce-session.js";
import { awaitInOrder } from "../../operators/await-in-order.js";
import { closeSpans } from "../../operators/close-spans.js";
import { dedupePipelineEvents } from "../../operators/dedupe-pipeline-events.js";
import { endRunOnTaskState } from "../../operators/end-run-on-task-state.js";
import { finishRun, runErrorEvent } from "../../operators/finish-run.js";
import { interruptsAsTools } from "../../operators/interrupts-as-tools.js";
import type { KernelSignal, RunItem, SignalOf } from "../../lib/model/kernel-signal.js";
import { mergeHeartbeat, type Heartbeat } from "../../operators/merge-heartbeat.js";
import { neutralizeTerminalControls } from "../../operators/neutralize-terminal-controls.js";
import { projectArtifacts } from "../../operators/project-artifacts.js";
import { projectPipelineEvents } from "../../operators/project-pipeline-events.js";
import { projectReasoning } from "../../operators/project-reasoning.js";
import { projectSteps } from "../../operators/project-steps.js";
import { projectText } from "../../operators/project-text.js";
import { projectTools } from "../../operators/project-tools.js";
import { toKernelSignals } from "../../operators/to-kernel-signals.js";
import { unwrapStreamResponse } from "../../operators/unwrap-stream-response.js";

/** The stages of `runAgent`'s pipes, top to bottom, as `lib/run.ts` names them. */
export const RUN_PIPELINE_STAGES = [
  // readKernel
  "tap",
  "followDrops",
  "endRunOnTaskState",
  "awaitInOrder",
  "takeWhile",
  // unfoldPipeline
  "dedupePipelineEvents",
  "projectPipelineEvents",
  "projectSteps",
  // projectToAgui
  "projectText",
  "projectReasoning",
  "projectTools",
  "projectArtifacts",
  "announceSession",
  "aggregateUsage",
  "awaitInOrder",
  "finishRun",
  // deliver
  "startWith",
  "catchError",
  "interruptsShownAsTools",
  "neutralizeTerminalControls",
  "closeSpans",
  "tap",
  "mergeHeartbeat",
] as const;

export interface ChainOptions {
  threadId?: string;
  runId?: string;
  /** The execution as the run starts (`thread.state.execution`). */
  pipelineSequence?: number;
  pipelineOpenSteps?: readonly string[];
  textSnapshotDigests?: readonly string[];
  interruptsAsTools?: boolean;
  isAnswered?: (inputId: string) => boolean;
  /** Whether the thread's write of the interrupts fails (R-PER-4): the run must then end in RUN_ERROR. */
  failPersistence?: boolean;
  heartbeatMs?: number;
  scheduler?: SchedulerLike;
}

/** The kernel's JSON-RPC results → kernel signals, as `runAgent` reads a new run's stream. */
export function framesToSignals(): OperatorFunction<JsonRpcResult, KernelSignal> {
  return pipe(unwrapStreamResponse(), toKernelSignals({ readLeadingSnapshotInputs: false }));
}

/**
 * `settleRunEnd` without a disk: inputs become interrupts through the real
 * allowlist and interrupt builder, and a failed write is a
 * STATE_PERSISTENCE_FAILED end.
 */
function settleInMemory(options: ChainOptions) {
  return (item: RunItem): RunItem | Promise<RunItem> => {
    if (!("kind" in item) || item.kind !== "run-end") return item;
    return settleEnd(item);
  };
  async function settleEnd(item: SignalOf<"run-end">): Promise<RunItem> {
    const end: SignalOf<"run-end"> = item;
    if (end.error || !end.inputs?.length) return end;
    if (options.failPersistence) return { ...end, inputs: undefined, error: new AguiError("STATE_PERSISTENCE_FAILED") };
    try {
      const interrupts = end.inputs.map(({ projection, sideband }) => toInterrupt({ value: keepInput(projection), sideband }, "en"));
      return { ...end, interrupts };
    } catch (error) {
      const failure =
        error instanceof AguiError && error.code === "A2A_PROTOCOL_ERROR"
          ? error
          : new AguiError("STATE_PERSISTENCE_FAILED", {}, { cause: error });
      return { ...end, inputs: undefined, error: failure };
    }
  }
}

/** Kernel signals → what `runAgent` hands the SSE sink: AG-UI events and heartbeats. */
export function projectionChain(options: ChainOptions = {}): OperatorFunction<KernelSignal, AGUIEvent | Heartbeat> {
  const threadId = options.threadId ?? "thread-1";
  const runId = options.runId ?? "run-1";
  const describe = (error: AguiError) => messageFor(error, "en");
  const followDrops = (signals: Observable<KernelSignal>) => signals;
  // The thread's writes of the task and session ids, in memory: asynchronous for the signals that change them, as on disk.
  const seen = new Set<string>();
  const remember = (signal: KernelSignal): KernelSignal | Promise<KernelSignal> => {
    const key =
      signal.kind === "task-bound" ? `task:${signal.taskId}` : signal.kind === "session-bound" ? `session:${signal.sessionId}` : undefined;
    if (key === undefined || seen.has(key)) return signal;
    seen.add(key);
    return Promise.resolve(signal);
  };
  const readKernel = pipe(
    tap<KernelSignal>(() => {}),
    followDrops,
    endRunOnTaskState({ isAnswered: options.isAnswered ?? (() => false) }),
    awaitInOrder(remember),
    takeWhile((signal: KernelSignal) => signal.kind !== "run-end", true),
  );
  const unfoldPipeline = pipe(
    dedupePipelineEvents({ cursor: options.pipelineSequence ?? 0 }),
    projectPipelineEvents({ threadId }),
    projectSteps({ durableOpen: options.pipelineOpenSteps ?? [] }),
  );
  const projectToAgui = pipe(
    projectText({ knownDigests: new Set(options.textSnapshotDigests ?? []) }),
    projectReasoning({ runId }),
    projectTools(),
    projectArtifacts(),
    announceSession({ threadId, runId, executionId: "execution-1", contextId: "context-1", rosInvocationId: "ros-1" }),
    aggregateUsage(),
    awaitInOrder(settleInMemory(options)),
    finishRun({ threadId, runId, describe }),
  );
  const deliver = pipe(
    startWith<AGUIEvent>({ type: EventType.RUN_STARTED, threadId, runId }),
    catchError((error: unknown) => of(runErrorEvent(toAguiError(error), describe))),
    options.interruptsAsTools ? interruptsAsTools() : (events: Observable<AGUIEvent>) => events,
    neutralizeTerminalControls(),
    closeSpans(),
    tap<AGUIEvent>(() => {}),
    mergeHeartbeat<AGUIEvent>(options.heartbeatMs ?? 15_000, options.scheduler),
  );
  return (signals) => signals.pipe(readKernel, unfoldPipeline, projectToAgui, deliver);
}
