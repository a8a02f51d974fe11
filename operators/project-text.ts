/**
 * Text signals → `TEXT_MESSAGE_START / CONTENT… / END` (R-SIB-1).
 *
 * A streamed message opens on its first delta and gets one CONTENT per
 * delta. The kernel's `assistantFinal` status repeats the whole answer: when
 * text already streamed in this run it only completes the open message (END)
 * and is never sent again; when nothing streamed it goes out as one
 * whole-message triplet. History text (a Task snapshot) is shown only when
 * nothing else was. Messages never run in parallel here: opening one closes
 * the previous. Other items pass through untouched.
 *
 *   d1 d2 final  → START CONTENT(d1) CONTENT(d2) END
 *   final        → START CONTENT(all) END
 */
import { EventType, type AGUIEvent } from "@ag-ui/core";
import { defer, mergeMap, type OperatorFunction } from "rxjs";
import { isSignalOf, type RunItem, type SignalOf } from "./kernel-signal.js";

export interface ProjectTextOptions {
  /** Id for text the kernel sent without a message id. */
  newMessageId?: () => string;
}

const isText = isSignalOf("text");

export function projectText(options: ProjectTextOptions = {}): OperatorFunction<RunItem, RunItem> {
  const newMessageId = options.newMessageId ?? (() => `assistant-${crypto.randomUUID().replaceAll("-", "")}`);
  return (source) =>
    defer(() => {
      let openId: string | undefined;
      let textEmitted = false;

      const close = (): AGUIEvent[] => {
        if (openId === undefined) return [];
        const end: AGUIEvent = { type: EventType.TEXT_MESSAGE_END, messageId: openId };
        openId = undefined;
        return [end];
      };

      const append = (messageId: string, delta: string): AGUIEvent[] => {
        const out: AGUIEvent[] = [];
        if (messageId !== openId) {
          out.push(...close(), { type: EventType.TEXT_MESSAGE_START, messageId, role: "assistant" });
          openId = messageId;
        }
        out.push({ type: EventType.TEXT_MESSAGE_CONTENT, messageId, delta });
        textEmitted = true;
        return out;
      };

      const project = (signal: SignalOf<"text">): AGUIEvent[] => {
        if (signal.source === "delta") return append(signal.messageId ?? openId ?? newMessageId(), signal.text);
        if (textEmitted) return signal.source === "final" ? close() : [];
        return [...append(signal.messageId ?? newMessageId(), signal.text), ...close()];
      };

      return source.pipe(mergeMap((item) => (isText(item) ? (item.text ? project(item) : []) : [item])));
    });
}
