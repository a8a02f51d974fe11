/**
 * Reasoning signals → `REASONING_START`, `REASONING_MESSAGE_START` (role
 * `reasoning`), one `REASONING_MESSAGE_CONTENT` per chunk, and on close
 * `REASONING_MESSAGE_END` + `REASONING_END` (R-SIB-2).
 *
 * Reasoning always closes before text: this operator sits after
 * `projectText` and closes every open reasoning span before any text event
 * passes. A span's id is `reasoning-<message>`: the message `projectText`
 * placed the thinking beside (its lane's message, so parallel candidates
 * think in separate spans, and a new turn thinks in a new span), else the
 * text message open now, else the run.
 *
 *   r1 r2 TEXT_START → R_START RM_START RM_CONTENT RM_CONTENT RM_END R_END TEXT_START
 */
import { EventType, type AGUIEvent } from "@ag-ui/core";
import type { OperatorFunction } from "rxjs";
import { emitEachPer } from "./emit-each.js";
import { isSignal, type RunItem, type SignalOf } from "../lib/model/kernel-signal.js";

const TEXT_EVENTS = new Set<string>([EventType.TEXT_MESSAGE_START, EventType.TEXT_MESSAGE_CONTENT, EventType.TEXT_MESSAGE_END]);

export function projectReasoning(options: { runId: string }): OperatorFunction<RunItem, RunItem> {
  return emitEachPer(() => {
    /** Open spans, in the order they opened. */
    const open = new Set<string>();
    let currentMessageId: string | undefined;

    /** Every open span closed, then `item`, in one array: no copy of the set, no array per span. */
    const closeAllBefore = (item: RunItem): RunItem[] => {
      const out: RunItem[] = [];
      for (const messageId of open)
        out.push({ type: EventType.REASONING_MESSAGE_END, messageId }, { type: EventType.REASONING_END, messageId });
      open.clear();
      out.push(item);
      return out;
    };

    const reason = ({ text, messageId }: SignalOf<"reasoning">): AGUIEvent[] => {
      const id = `reasoning-${messageId ?? currentMessageId ?? options.runId}`;
      const out: AGUIEvent[] = [];
      if (!open.has(id)) {
        open.add(id);
        out.push(
          { type: EventType.REASONING_START, messageId: id },
          { type: EventType.REASONING_MESSAGE_START, messageId: id, role: "reasoning" },
        );
      }
      out.push({ type: EventType.REASONING_MESSAGE_CONTENT, messageId: id, delta: text });
      return out;
    };

    return (item): RunItem | RunItem[] => {
      if (isSignal(item)) return item.kind === "reasoning" ? reason(item) : item;
      if (!TEXT_EVENTS.has(item.type)) return item;
      if (item.type === EventType.TEXT_MESSAGE_START) currentMessageId = item.messageId;
      if (item.type === EventType.TEXT_MESSAGE_END && item.messageId === currentMessageId) currentMessageId = undefined;
      return open.size === 0 ? item : closeAllBefore(item);
    };
  });
}
