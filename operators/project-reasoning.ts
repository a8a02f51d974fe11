/**
 * Reasoning signals → `REASONING_START`, `REASONING_MESSAGE_START` (role
 * `reasoning`), one `REASONING_MESSAGE_CONTENT` per chunk, and on close
 * `REASONING_MESSAGE_END` + `REASONING_END` (R-SIB-2).
 *
 * Reasoning always closes before text: this operator sits after
 * `projectText` and closes the open reasoning span before any text event
 * passes. The span id is `reasoning-<current text message | runId>`, the
 * current message being read off the text events that pass by.
 *
 *   r1 r2 TEXT_START → R_START RM_START RM_CONTENT RM_CONTENT RM_END R_END TEXT_START
 */
import { EventType, type AGUIEvent } from "@ag-ui/core";
import { defer, mergeMap, type OperatorFunction } from "rxjs";
import { isSignal, type RunItem } from "./kernel-signal.js";

const TEXT_EVENTS = new Set<string>([EventType.TEXT_MESSAGE_START, EventType.TEXT_MESSAGE_CONTENT, EventType.TEXT_MESSAGE_END]);

export function projectReasoning(options: { runId: string }): OperatorFunction<RunItem, RunItem> {
  return (source) =>
    defer(() => {
      let openId: string | undefined;
      let currentMessageId: string | undefined;

      const close = (): AGUIEvent[] => {
        if (openId === undefined) return [];
        const messageId = openId;
        openId = undefined;
        return [
          { type: EventType.REASONING_MESSAGE_END, messageId },
          { type: EventType.REASONING_END, messageId },
        ];
      };

      const reason = (delta: string): AGUIEvent[] => {
        const out: AGUIEvent[] = [];
        if (openId === undefined) {
          openId = `reasoning-${currentMessageId ?? options.runId}`;
          out.push(
            { type: EventType.REASONING_START, messageId: openId },
            { type: EventType.REASONING_MESSAGE_START, messageId: openId, role: "reasoning" },
          );
        }
        out.push({ type: EventType.REASONING_MESSAGE_CONTENT, messageId: openId, delta });
        return out;
      };

      return source.pipe(
        mergeMap((item): RunItem[] => {
          if (isSignal(item)) return item.kind === "reasoning" ? reason(item.text) : [item];
          if (!TEXT_EVENTS.has(item.type)) return [item];
          if (item.type === EventType.TEXT_MESSAGE_START) currentMessageId = item.messageId;
          if (item.type === EventType.TEXT_MESSAGE_END && item.messageId === currentMessageId) currentMessageId = undefined;
          return [...close(), item];
        }),
      );
    });
}
