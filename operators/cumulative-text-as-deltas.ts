/**
 * Status texts that repeat their whole message so far → only what is new.
 *
 * The iac-code kernel sends each chunk of a message once (contract §2);
 * many other A2A agents send, in every status update, all of the message's
 * text so far under one `messageId` ("Hello," then "Hello, this is"). A
 * message's second text tells which kind it is: one that starts with the
 * first and is longer makes the message cumulative, and from then on only
 * the part past the text before it goes on (an update equal to it adds
 * nothing); any other second text makes the message a stream of deltas, and
 * everything after passes as it comes, unchecked. A cumulative message
 * whose next text does not extend the last (the agent started over) passes
 * that text whole, and is read as deltas from there.
 *
 *   "Hello," "Hello, this is" "Hello, this is cumulative."  → "Hello," " this is" " cumulative."
 *   "Hello," " this is"                                     → unchanged
 *
 * Only the agent's streamed text under a `messageId` is read so: pipeline
 * text is the kernel's own deltas, and a `final` or `history` text is a
 * whole message already (`projectText`). The known text is never kept: a
 * message's text so far is held as its length and running hash
 * (`TextHash`), and a new text's first part is hashed to compare, so the
 * work is the length of the text that came.
 *
 * A stream of deltas whose second chunk begins with its whole first one
 * ("*" then "*", "1" then "1 file") would read as cumulative and lose that
 * repeat, as it does in `@ag-ui/a2a`. The iac-code kernel streams model
 * tokens, where this happens, so its runs are never read so: once the run
 * has a kernel session (`session-bound`, only an iac-code kernel names
 * one, in its first status), every text passes as it comes.
 *
 *   session-bound "*" "*"  →  "*" "*"
 */
import { identity, type OperatorFunction } from "rxjs";
import { emitEachPer } from "./emit-each.js";
import { isSignal, type RunItem, type SignalOf } from "../lib/model/kernel-signal.js";
import { TextHash } from "../lib/model/text-digest.js";

/** What is known of a message's texts: the hash of its text so far while it may be cumulative, `"deltas"` once it is not. */
type MessageTexts = TextHash | "deltas";

const hashOf = (text: string): TextHash => {
  const hash = new TextHash();
  hash.update(text);
  return hash;
};

/** `sessionKnown`: the thread has a kernel session already (a resumed run of an iac-code kernel, which may not name it again). */
export function cumulativeTextAsDeltas({ sessionKnown = false }: { sessionKnown?: boolean } = {}): OperatorFunction<RunItem, RunItem> {
  // Not even a pass-through stage: such a run's texts are never read as cumulative.
  if (sessionKnown) return identity;
  return emitEachPer(() => {
    const messages = new Map<string, MessageTexts>();
    let iacCodeKernel = false;

    /** The part of `text` the client does not have yet: "" when it only repeats the message. */
    const newPart = (messageId: string, text: string): string => {
      const whole = messages.get(messageId);
      if (whole === undefined) {
        messages.set(messageId, hashOf(text));
        return text;
      }
      if (whole === "deltas") return text;
      if (text.length >= whole.length) {
        const repeated = hashOf(text.slice(0, whole.length));
        // Same length, so the hashes alone tell.
        if (repeated.sha256() === whole.sha256()) {
          const rest = text.slice(whole.length);
          repeated.update(rest);
          messages.set(messageId, repeated);
          return rest;
        }
      }
      messages.set(messageId, "deltas");
      return text;
    };

    const read = (signal: SignalOf<"text">): RunItem | RunItem[] => {
      if (signal.source !== "delta" || signal.pipeline || signal.messageId === undefined) return signal;
      const text = newPart(signal.messageId, signal.text);
      if (text === signal.text) return signal;
      return text === "" ? [] : [{ ...signal, text }];
    };

    return (item): RunItem | RunItem[] => {
      if (!isSignal(item)) return item;
      if (item.kind === "session-bound") iacCodeKernel = true;
      return item.kind === "text" && !iacCodeKernel ? read(item) : item;
    };
  });
}
