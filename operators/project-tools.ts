/**
 * Tool signals → `TOOL_CALL_*`, and tool progress → CUSTOM
 * `iac-code.tool-progress.v1` (R-CUS-3).
 *
 *   started         → TOOL_CALL_START (parent = the assistant message of its turn,
 *                     as `projectText` placed it; else the text message open now)
 *   input_complete  → START if not yet open, ARGS (compact, key-sorted JSON), END;
 *                     nothing for a call already closed (its parts told again)
 *   completed       → END if still open, then TOOL_CALL_RESULT — once per call,
 *                     as the message `<runId>:tool-result:<toolCallId>`
 *   failed          → the same, with `metadata["iac-code"].status = "failed"`
 *                     so a generic client can tell a failed tool (R-SIB-3)
 *
 * Open calls left at the run's end are closed by `closeSpans`.
 */
import { EventType, type AGUIEvent } from "@ag-ui/core";
import type { OperatorFunction } from "rxjs";
import { emitEachPer } from "./emit-each.js";
import { isSignal, type RunItem, type SignalOf } from "../lib/model/kernel-signal.js";
import { canonicalJson } from "../lib/model/json.js";
import { toolResultMessageId } from "../lib/model/message-ids.js";

export const TOOL_PROGRESS_EVENT = "iac-code.tool-progress.v1";

const resultContent = (result: unknown) => (typeof result === "string" ? result : canonicalJson(result ?? null));

/** `runId`: the run whose messages these are (for an observer, the run it watches). */
export function projectTools(options: { runId: string }): OperatorFunction<RunItem, RunItem> {
  return emitEachPer(() => {
    const open = new Set<string>();
    /** Every call started in this run: one told again (an agent that repeats its message's parts) is not opened twice. */
    const started = new Set<string>();
    const answered = new Set<string>();
    let currentMessageId: string | undefined;

    const start = ({ toolCallId, toolName, parentMessageId }: SignalOf<"tool">): AGUIEvent[] => {
      if (started.has(toolCallId)) return [];
      started.add(toolCallId);
      open.add(toolCallId);
      const parent = parentMessageId ?? currentMessageId;
      const event: AGUIEvent = { type: EventType.TOOL_CALL_START, toolCallId, toolCallName: toolName };
      return [parent === undefined ? event : { ...event, parentMessageId: parent }];
    };

    const end = (toolCallId: string): AGUIEvent[] => (open.delete(toolCallId) ? [{ type: EventType.TOOL_CALL_END, toolCallId }] : []);

    const project = (signal: SignalOf<"tool">): AGUIEvent[] => {
      switch (signal.status) {
        case "started":
          return start(signal);
        case "input_complete":
          if (started.has(signal.toolCallId) && !open.has(signal.toolCallId)) return [];
          return [
            ...start(signal),
            { type: EventType.TOOL_CALL_ARGS, toolCallId: signal.toolCallId, delta: canonicalJson(signal.input) },
            ...end(signal.toolCallId),
          ];
        case "completed":
        case "failed": {
          if (answered.has(signal.toolCallId)) return [];
          answered.add(signal.toolCallId);
          return [
            ...end(signal.toolCallId),
            {
              type: EventType.TOOL_CALL_RESULT,
              messageId: toolResultMessageId(options.runId, signal.toolCallId),
              toolCallId: signal.toolCallId,
              content: resultContent(signal.result),
              role: "tool",
              metadata: { "iac-code": { status: signal.status } },
            },
          ];
        }
      }
    };

    return (item): RunItem | RunItem[] => {
      if (!isSignal(item)) {
        if (item.type === EventType.TEXT_MESSAGE_START) currentMessageId = item.messageId;
        if (item.type === EventType.TEXT_MESSAGE_END && item.messageId === currentMessageId) currentMessageId = undefined;
        return item;
      }
      if (item.kind === "tool") return project(item);
      if (item.kind === "tool-progress") {
        return [{ type: EventType.CUSTOM, name: TOOL_PROGRESS_EVENT, value: { schemaVersion: 1, ...item.tool } }];
      }
      return item;
    };
  });
}
