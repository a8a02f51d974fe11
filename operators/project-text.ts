/**
 * Text signals → `TEXT_MESSAGE_START / CONTENT… / END` (R-SIB-1).
 *
 * A streamed message opens on its first delta and gets one CONTENT per
 * delta. The kernel's `assistantFinal` status repeats the whole answer: when
 * text already streamed in this run it only completes the open message (END)
 * and is never sent again; when nothing streamed it goes out as one
 * whole-message triplet. History text (a Task snapshot) is shown only when
 * nothing else was. Agent messages never run in parallel: opening one
 * closes the previous. Pipeline messages do (parallel candidates, R-MAP-3):
 * each keeps its own id and stays open until the run's spans close. Other
 * items pass through untouched.
 *
 *   d1 d2 final  → START CONTENT(d1) CONTENT(d2) END
 *   final        → START CONTENT(all) END
 *
 * After a resume the kernel may repeat, in a message's first text, all the
 * text the client already has (contract §6). Given the digests of what was
 * sent before, only the new suffix goes out. The digests of this run's
 * messages ride on the `run-end` signal, for the next resume.
 */
import { createHash } from "node:crypto";
import { EventType, type AGUIEvent } from "@ag-ui/core";
import { defer, type OperatorFunction } from "rxjs";
import { emitEach } from "./emit-each.js";
import { isSignal, type RunItem, type SignalOf } from "../lib/model/kernel-signal.js";

export interface ProjectTextOptions {
  /** Id for text the kernel sent without a message id. */
  newMessageId?: () => string;
  /** SHA-256 digests of the full text of messages sent in earlier runs of this execution. */
  knownDigests?: ReadonlySet<string>;
}

export const textDigest = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

/**
 * Length (in UTF-16 units) of the longest prefix of `text` whose digest is
 * known, 0 if none. Hashes incrementally, character by character, so a long
 * text costs one pass.
 */
export function replayedPrefixLength(text: string, known: ReadonlySet<string>): number {
  if (known.size === 0) return 0;
  const hash = createHash("sha256");
  let length = 0;
  let longest = 0;
  for (const character of text) {
    hash.update(character, "utf8");
    length += character.length;
    if (known.has(hash.copy().digest("hex"))) longest = length;
  }
  return longest;
}

export function projectText(options: ProjectTextOptions = {}): OperatorFunction<RunItem, RunItem> {
  const newMessageId = options.newMessageId ?? (() => `assistant-${crypto.randomUUID().replaceAll("-", "")}`);
  const knownDigests = options.knownDigests ?? new Set<string>();
  return (source) =>
    defer(() => {
      /** The message new agent text goes to; pipeline messages may be open beside it. */
      let openId: string | undefined;
      const open = new Set<string>();
      let textEmitted = false;
      /** The full text of each message of this run, as the client now has it, in order of first text. */
      const sent = new Map<string, string>();

      const close = (): AGUIEvent[] => {
        if (openId === undefined) return [];
        const end: AGUIEvent = { type: EventType.TEXT_MESSAGE_END, messageId: openId };
        open.delete(openId);
        openId = undefined;
        return [end];
      };

      /** What of `text` is new to the client: all of it, unless it repeats an earlier run's message. */
      const unseen = (messageId: string, text: string, replayable: boolean): string => {
        if (sent.has(messageId)) {
          sent.set(messageId, sent.get(messageId)! + text);
          return text;
        }
        sent.set(messageId, text);
        return replayable ? text.slice(replayedPrefixLength(text, knownDigests)) : text;
      };

      const append = (messageId: string, text: string, pipeline = false): AGUIEvent[] => {
        const delta = unseen(messageId, text, !pipeline);
        if (!delta) return [];
        const out: AGUIEvent[] = [];
        if (!open.has(messageId)) {
          if (!pipeline) out.push(...close());
          out.push({ type: EventType.TEXT_MESSAGE_START, messageId, role: "assistant" });
          open.add(messageId);
        }
        openId = messageId;
        out.push({ type: EventType.TEXT_MESSAGE_CONTENT, messageId, delta });
        textEmitted = true;
        return out;
      };

      const project = (signal: SignalOf<"text">): AGUIEvent[] => {
        if (!signal.text) return [];
        if (signal.source === "delta") return append(signal.messageId ?? openId ?? newMessageId(), signal.text, signal.pipeline);
        if (textEmitted) return signal.source === "final" ? close() : [];
        return [...append(signal.messageId ?? newMessageId(), signal.text), ...close()];
      };

      return source.pipe(
        emitEach((item): RunItem[] => {
          if (!isSignal(item)) return [item];
          if (item.kind === "text") return project(item);
          if (item.kind === "run-end" && sent.size > 0) return [{ ...item, textDigests: [...sent.values()].map(textDigest) }];
          return [item];
        }),
      );
    });
}
