/**
 * Pipeline envelopes → the signals the normal-mode projectors already
 * handle, plus CUSTOM `iac-code.pipeline.v1`; the recovery snapshot →
 * ACTIVITY_SNAPSHOT (contract §4, §6; R-MAP-3, R-MAP-4, R-CUS-4).
 *
 *   text_delta       → text {source: "delta", pipeline: true}
 *   thinking_delta   → reasoning (raw_thinking only)
 *   tool_started     → tool input_complete  (START, ARGS, END downstream)
 *   tool_result      → tool completed | failed (isError === true)
 *   usage            → usage
 *   step lifecycle   → step started | finished, when the envelope names a step, with its facts (`step-facts.ts`)
 *   the allowlist    → CUSTOM {name: "iac-code.pipeline.v1", value: <envelope verbatim>}
 *   anything else    → nothing
 *
 *   snapshot(p1) text_delta(candidate c1) text_delta(candidate c2)
 *     → ACTIVITY_SNAPSHOT(pipeline:p1) text(pipeline-message:…:c1) text(pipeline-message:…:c2)
 *
 * Dispositions come from the registry (`pipeline-event-types.ts`). Text,
 * reasoning and tool calls are addressed by the envelope's kernel message
 * (`pipelineMessageId`), so parallel candidates write separate messages;
 * `projectText` scopes it to the run. The activity is named by the pipeline
 * run id, `pipeline-<threadId>` until a recovery snapshot names the run.
 * Within one envelope the order is
 * standard signal, step, CUSTOM. Dedupe happens upstream
 * (`dedupePipelineEvents`); steps are balanced downstream (`projectSteps`).
 */
import { EventType, type AGUIEvent } from "@ag-ui/core";
import type { OperatorFunction } from "rxjs";
import { emitEachPer } from "./emit-each.js";
import {
  assertNever,
  isSignal,
  type KernelSignal,
  type PipelineEnvelope,
  type RunItem,
  type SignalOf,
} from "../lib/model/kernel-signal.js";
import { dispositionOf, isCustom, type StandardMapping } from "../lib/model/pipeline-event-types.js";
import { defaultPipelineRunId, pipelineActivityId, pipelineMessageId, pipelineStepKey, stepNameOf } from "../lib/model/pipeline-ids.js";
import { isJsonObject as isObject, nonEmptyString as nonEmpty } from "../lib/model/json.js";
import { stepFactsOf } from "../lib/model/step-facts.js";
import { newToolCallId } from "../lib/model/tool-ids.js";
import { tokenUsageOf as usageOf } from "../lib/model/usage.js";

export const PIPELINE_EVENT = "iac-code.pipeline.v1";

export interface ProjectPipelineEventsOptions {
  threadId: string;
  /** Id for a tool call the envelope sent without `toolUseId`. */
  newToolId?: () => string;
}

/** What an envelope that stands for nothing becomes: shared, since nothing reads it but to find it empty. */
const NONE: readonly RunItem[] = Object.freeze([]);

export function projectPipelineEvents(options: ProjectPipelineEventsOptions): OperatorFunction<RunItem, RunItem> {
  const newToolId = options.newToolId ?? newToolCallId;
  return emitEachPer(() => {
    let pipelineRunId = defaultPipelineRunId(options.threadId);

    const standard = (as: StandardMapping, envelope: PipelineEnvelope): KernelSignal | undefined => {
      const data = envelope.data;
      if (!isObject(data)) return undefined;
      switch (as) {
        case "text": {
          const text = nonEmpty(data.text);
          if (text === undefined) return undefined;
          return { kind: "text", messageId: pipelineMessageId(envelope), text, source: "delta", pipeline: true };
        }
        case "reasoning": {
          const text = nonEmpty(data.text);
          if (data.type !== "raw_thinking" || text === undefined) return undefined;
          return { kind: "reasoning", text, messageId: pipelineMessageId(envelope) };
        }
        case "tool-start":
          return {
            kind: "tool",
            status: "input_complete",
            toolCallId: nonEmpty(data.toolUseId) ?? newToolId(),
            toolName: nonEmpty(data.toolName) ?? "tool",
            // As in normal mode, a call with no input reads as no arguments.
            input: data.input ?? {},
            result: undefined,
            messageId: pipelineMessageId(envelope),
          };
        case "tool-result":
          return {
            kind: "tool",
            status: data.isError === true ? "failed" : "completed",
            toolCallId: nonEmpty(data.toolUseId) ?? newToolId(),
            toolName: nonEmpty(data.toolName) ?? "tool",
            input: data.input,
            result: data.result,
            messageId: pipelineMessageId(envelope),
          };
        case "usage":
          return { kind: "usage", usage: usageOf(data) };
        default:
          return assertNever(as);
      }
    };

    /**
     * The envelope's signal (a standard mapping's, or its step's) and its CUSTOM event, in that order: one
     * item alone, not in an array, and no array pushed onto for the usual one or two (each envelope made
     * two or three arrays).
     */
    const project = ({ envelope }: SignalOf<"pipeline-event">): RunItem | readonly RunItem[] => {
      const disposition = dispositionOf(envelope.eventType);
      let own: KernelSignal | undefined;
      if (disposition.kind === "standard") own = standard(disposition.as, envelope);
      if (disposition.kind === "step") {
        const key = pipelineStepKey(envelope);
        if (key !== undefined)
          own = {
            kind: "step",
            phase: disposition.phase,
            key,
            name: stepNameOf(key),
            facts: stepFactsOf(envelope, key, disposition.phase),
          };
      }
      if (!isCustom(disposition)) return own ?? NONE;
      const custom: AGUIEvent = { type: EventType.CUSTOM, name: PIPELINE_EVENT, value: envelope };
      return own === undefined ? custom : [own, custom];
    };

    const recover = ({ snapshot }: SignalOf<"pipeline-snapshot">): AGUIEvent[] => {
      pipelineRunId = nonEmpty(snapshot.pipelineRunId) ?? pipelineRunId;
      return [
        {
          type: EventType.ACTIVITY_SNAPSHOT,
          messageId: pipelineActivityId(pipelineRunId),
          activityType: PIPELINE_EVENT,
          content: { schemaVersion: 1, pipelineRunId, snapshot },
          replace: true,
        },
      ];
    };

    return (item): RunItem | readonly RunItem[] => {
      if (!isSignal(item)) return item;
      if (item.kind === "pipeline-event") return project(item);
      if (item.kind === "pipeline-snapshot") return recover(item);
      return item;
    };
  });
}
