/**
 * The run's chain (`lib/run-pipeline.ts`) with in-memory ports: what the
 * property tests feed random kernel streams through and what `npm run
 * bench` times. It is the production chain itself; only the thread's I/O is
 * replaced (ids "written" asynchronously, as on disk; a pause kept through
 * the real allowlist and interrupt builder; a write that can be told to fail).
 *
 * `lib/testing/` holds what the specs and the bench both start, so neither
 * imports the other's code; the service itself never imports it.
 */
import type { AGUIEvent } from "@ag-ui/core";
import type { OperatorFunction, SchedulerLike } from "rxjs";
import { AguiError } from "../errors.js";
import { freshRunSetup, withInterruptsShown } from "../runs/fresh-run.js";
import { describeError } from "../i18n/index.js";
import type { KernelSignal, SignalOf } from "../model/kernel-signal.js";
import { runPipeline, type RunPorts } from "../run-pipeline.js";
import type { Heartbeat } from "../../operators/merge-heartbeat.js";

export { framesToSignals } from "../runs/fresh-run.js";

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
  /** The clock events are stamped from; a fixed instant unless given. */
  now?: () => number;
}

/** The instant the in-memory chain's clock stands at: every event it makes carries it. */
export const CHAIN_NOW = Date.UTC(2026, 0, 1);

/** A thread in memory: the ports `runAgent` gives the chain, without a disk. */
export function inMemoryPorts(options: ChainOptions = {}): RunPorts {
  const written = new Map<string, Promise<void>>();
  const stored = new Set<string>();
  return {
    isAnswered: options.isAnswered ?? (() => false),
    // Asynchronous for the signals that change something, as the thread's writes are.
    persistIds: (signal) => {
      const key =
        signal.kind === "task-bound"
          ? `task:${signal.taskId}`
          : signal.kind === "session-bound"
            ? `session:${signal.sessionId}`
            : undefined;
      if (key === undefined || stored.has(key)) return undefined;
      // A repeat while the first write of its id is under way waits for that write, as the thread's does.
      const write = written.get(key) ?? Promise.resolve().then(() => void stored.add(key));
      written.set(key, write);
      return write;
    },
    settleAndPersistEnd: async (end: SignalOf<"run-end">) => {
      if (end.error || !end.inputs?.length) return end;
      if (options.failPersistence) return { ...end, inputs: undefined, error: new AguiError("STATE_PERSISTENCE_FAILED") };
      try {
        return withInterruptsShown(end, "en");
      } catch (error) {
        const failure =
          error instanceof AguiError && error.code === "A2A_PROTOCOL_ERROR"
            ? error
            : new AguiError("STATE_PERSISTENCE_FAILED", {}, { cause: error });
        return { ...end, inputs: undefined, error: failure };
      }
    },
    scheduler: options.scheduler,
    now: options.now ?? (() => CHAIN_NOW),
  };
}

/** Kernel signals → what `runAgent` hands the SSE sink: AG-UI events and heartbeats. */
export function projectionChain(options: ChainOptions = {}): OperatorFunction<KernelSignal, AGUIEvent | Heartbeat> {
  const ids = {
    threadId: options.threadId ?? "thread-1",
    runId: options.runId ?? "run-1",
    executionId: "execution-1",
    contextId: "context-1",
    rosInvocationId: "ros-1",
  };
  return runPipeline(
    freshRunSetup(ids, {
      pipelineSequence: options.pipelineSequence ?? 0,
      pipelineOpenSteps: options.pipelineOpenSteps ?? [],
      textSnapshotDigests: options.textSnapshotDigests ?? [],
      describe: (error) => describeError(error, "en"),
      heartbeatMs: options.heartbeatMs ?? 15_000,
      interruptsAsTools: options.interruptsAsTools ?? false,
    }),
    inMemoryPorts(options),
  );
}
