/**
 * What the kernel said, once the A2A wire shape is peeled off. Every operator
 * downstream of `toKernelSignals` switches on `kind`; a new kind fails to
 * compile until each `switch` handles it (see `assertNever`).
 */
import type { AGUIEvent, Interrupt, TokenUsage } from "@ag-ui/core";
import type { AguiError } from "../errors.js";
import type { StepFacts } from "./step-facts.js";

/** Task states, normalised from `TASK_STATE_INPUT_REQUIRED` / `input-required` spellings. */
export type TaskStateName =
  "submitted" | "working" | "input-required" | "completed" | "failed" | "canceled" | "rejected" | "auth-required" | "unknown";

export type ToolStatus = "started" | "input_complete" | "completed" | "failed";

/** A `required: true` input projection the kernel is waiting on (contract §5). */
export interface KernelInput {
  /** The allowlisted fields of the kernel's projection (contract §5), with an `inputId`. */
  projection: Record<string, unknown>;
  /** Answered out of band (`SendMessage`), as sub-pipeline waits are. */
  sideband: boolean;
}

export type KernelSignal =
  /**
   * The A2A task this run drives is known (first Task frame or any update).
   * `storing`: the thread's write of it is under way, so it may not be
   * announced yet; the signal comes again without it once it is on disk
   * (`persistIdsAside`). Likewise for `session-bound`.
   */
  | { kind: "task-bound"; taskId: string; contextId: string | undefined; storing?: true }
  /** The kernel's session id (`metadata.iac_code.iacCodeSessionId`). */
  | { kind: "session-bound"; sessionId: string; storing?: true }
  /**
   * Agent text. `delta` is one streamed chunk; `final` is the `assistantFinal`
   * status repeating the whole answer and `history` the trailing agent turns
   * of a Task snapshot: both are shown only when nothing streamed before.
   */
  | {
      kind: "text";
      messageId: string | undefined;
      text: string;
      source: "delta" | "final" | "history";
      /** Pipeline text: its messages may be open side by side (parallel candidates), and it is never a replay. */
      pipeline?: true;
    }
  /**
   * Thinking; `messageId` names the kernel message it belongs to (pipeline
   * text), else the current one; `projectText` replaces it with the AG-UI
   * message it goes beside.
   */
  | { kind: "reasoning"; text: string; messageId?: string }
  /** One pipeline envelope (`metadata.iac_code.pipeline` / `pipelineBatch.events[]`), verbatim. */
  | { kind: "pipeline-event"; envelope: PipelineEnvelope; recovered: boolean }
  /** The recovery snapshot of `GET <a2a>/iac-code/pipeline/state` (contract §6); recovered events follow it. */
  | { kind: "pipeline-snapshot"; snapshot: Record<string, unknown> }
  /** A pipeline step opened or closed; `key` is namespaced per sub-pipeline (contract §6). */
  | {
      kind: "step";
      phase: "started" | "finished";
      key: string;
      name: string;
      /** What the kernel's envelope says of the step (`step-facts.ts`); absent, the span knows only its key. */
      facts?: StepFacts;
    }
  | {
      kind: "tool";
      status: ToolStatus;
      toolCallId: string;
      toolName: string;
      input: unknown;
      result: unknown;
      /** The kernel message the call belongs to: a pipeline envelope's, else the agent's current one. */
      messageId?: string;
      /** The AG-UI assistant message the call is shown in, once `projectText` has placed it (its turn's message). */
      parentMessageId?: string;
    }
  /** `tool.status == "progress"`: the tool metadata, passed through. */
  | { kind: "tool-progress"; tool: Record<string, unknown> }
  | { kind: "usage"; usage: TokenUsage }
  | { kind: "artifact"; artifact: Record<string, unknown> }
  /** The data parts of a message from an agent without iac-code metadata, not tool calls: the A2A message with those parts only. */
  | { kind: "message-data"; message: Record<string, unknown> }
  /** `reason`: the text of the status message that carried the state, when it had one (a failed task's explanation). */
  | { kind: "task-state"; state: TaskStateName; reason?: string }
  /** The kernel waits for input (`input` / `pendingPermissions`): the run pauses at an interrupt. */
  | { kind: "inputs"; inputs: KernelInput[] }
  /**
   * The run is over: the last signal of every run, emitted by
   * `endRunOnTaskState`. `kernelSettled` says the kernel itself reported a
   * terminal (or input-required) state; when false the task may still be
   * running upstream and the caller cancels it.
   */
  | {
      kind: "run-end";
      error: AguiError | undefined;
      kernelSettled: boolean;
      usage?: TokenUsage[];
      /** The inputs the run pauses on, as the kernel sent them. */
      inputs?: KernelInput[];
      /** Digests of the full text of every message of this run (contract §6), for the resume after. */
      textDigests?: string[];
      /** The committed interrupts, once persisted: only then is the pause announced (R-INT-3). */
      interrupts?: Interrupt[];
      /** The pipeline cursor reached: the highest sequence seen (contract §4 dedupe). */
      pipelineSequence?: number;
      /** The durable open pipeline steps, by key, reopened by the next run (R-MAP-2). */
      openSteps?: string[];
      /**
       * The user cancelled what the run waited on (a question, a deployment
       * confirmation): the run finishes with `outcome: cancelled`, which a
       * client reads as the end of its pending interrupts; an error would
       * leave them pending in every client, and the chat locked.
       */
      cancelled?: boolean;
    };

/** The kernel's pipeline event envelope (contract §3); only these fields are read, the rest passes verbatim. */
export interface PipelineEnvelope extends Record<string, unknown> {
  eventType?: unknown;
  eventId?: unknown;
  sequence?: unknown;
  scope?: unknown;
  data?: unknown;
  step?: unknown;
  candidate?: unknown;
  candidateStep?: unknown;
}

export type SignalOf<K extends KernelSignal["kind"]> = Extract<KernelSignal, { kind: K }>;

/**
 * Between the projection operators the stream carries signals not yet
 * projected and AG-UI events already made; each projector turns its own
 * kinds into events and lets everything else through in order.
 */
export type RunItem = KernelSignal | AGUIEvent;

// A read, not `"kind" in item`: every projector asks this of every item, whose shapes are many, and a
// property read is about half the cost of an `in` test there (measured over the chain bench's items).
export const isSignal = (item: RunItem): item is KernelSignal => (item as Partial<KernelSignal>).kind !== undefined;

export function isSignalOf<K extends KernelSignal["kind"]>(kind: K) {
  return (item: RunItem): item is SignalOf<K> => isSignal(item) && item.kind === kind;
}

export function assertNever(value: never): never {
  throw new Error(`unhandled case: ${JSON.stringify(value)}`);
}
