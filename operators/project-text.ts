/**
 * Text signals → `TEXT_MESSAGE_START / CONTENT… / END` (R-SIB-1), and the
 * assistant message each tool call and thinking belongs to.
 *
 * A streamed message opens on its first delta and gets one CONTENT per
 * delta. The kernel's `assistantFinal` status repeats the whole answer: when
 * text already streamed in this run it only completes the open message (END)
 * and is never sent again; when nothing streamed it goes out as one
 * whole-message triplet. History text (a Task snapshot) is shown only when
 * nothing else was. Agent messages never run in parallel: opening one
 * closes the previous. Pipeline messages do (parallel candidates, R-MAP-3):
 * each keeps its own lane, open until its step ends: a `STEP_FINISHED`
 * whose facts name the step's attempt (`stepRunId`) first closes every
 * pipeline message that attempt's id is a coordinate of (`pipelineMessageId`:
 * a step's own, its candidates', their steps'). Text that comes for such a
 * message later (the step reopened after an input) opens it again under the
 * same id, which AG-UI allows.
 *
 *   d(pm:…:step-plan-1) STEP_FINISHED{stepRunId: step-plan-1}
 *     → START CONTENT END STEP_FINISHED
 *
 *   d1 d2 final  → START CONTENT(d1) CONTENT(d2) END
 *   final        → START CONTENT(all) END
 *
 * Ids (`lib/model/message-ids.ts`): a message is `<runId>:<kernel message>`,
 * so no run writes into another run's message. A turn is what the assistant
 * says and calls until a tool answers: a tool call goes in the assistant
 * message of its turn (the lane's text message, else one named after the
 * turn's first call), and a tool result ends the turn. The kernel's text
 * after a result, even under the same kernel message id, opens a new
 * message (`…:after:<toolCallId>`), which a client places below the result.
 *
 *   d1 tool(started t1) tool(completed t1) d2
 *     → START(r:m) CONTENT(d1) tool{parent r:m} END(r:m) tool START(r:m:after:t1) CONTENT(d2)
 *
 * After a resume the kernel may repeat, in a message's first text, all the
 * text the client already has (contract §6). Given the digests of what was
 * sent before, only the new suffix goes out. The digests of this run's
 * messages ride on the `run-end` signal, for the next resume; each is
 * hashed as its text goes out, so the run keeps no text (a long answer
 * costs no memory here, lib/model/text-digest.ts).
 */
import { EventType, type AGUIEvent } from "@ag-ui/core";
import { defer, type OperatorFunction } from "rxjs";
import { emitEach } from "./emit-each.js";
import { isSignal, type RunItem, type SignalOf } from "../lib/model/kernel-signal.js";
import { stepFactsFrom } from "../lib/model/step-facts.js";
import { runMessageId, toolTurnMessageId } from "../lib/model/message-ids.js";
import { parseTextDigest, splitsCharacter, TextHash } from "../lib/model/text-digest.js";

export { textDigest } from "../lib/model/text-digest.js";

export interface ProjectTextOptions {
  /** The run whose messages these are: the run itself, or for an observer the run it watches. */
  runId: string;
  /** Kernel message id for text the kernel sent without one. */
  newMessageId?: () => string;
  /** Digests of the full text of messages sent in earlier runs of this execution (`textDigest`, or bare SHA-256 hex from older states). */
  knownDigests?: Iterable<string>;
  /**
   * What pipeline messages are named under instead of the run: the
   * execution, whose pipeline names each message once. A run that resumes
   * it then goes on in the message its pause left open (a candidate's
   * paragraph stays one), where the agent's own text starts anew.
   */
  pipelineScope?: string;
}

/** The texts shown before, as the resume check looks them up. */
export interface KnownTexts {
  /** The lengths of the texts whose digests carry one, ascending, once each. */
  lengths: number[];
  /** Their digests, as `TextHash.digest()` gives them. */
  digests: ReadonlySet<string>;
  /** Bare SHA-256 hex digests (states written before lengths were kept): their lengths are unknown. */
  bare: ReadonlySet<string>;
}

export function knownTexts(digests: Iterable<string>): KnownTexts {
  const lengths = new Set<number>();
  const withLength = new Set<string>();
  const bare = new Set<string>();
  for (const digest of digests) {
    const { sha256, length } = parseTextDigest(digest);
    if (length === undefined) bare.add(sha256);
    else if (length > 0) {
      lengths.add(length);
      withLength.add(digest);
    }
  }
  return { lengths: [...lengths].sort((a, b) => a - b), digests: withLength, bare };
}

/**
 * How far a bare digest is looked for, in UTF-16 code units: without its
 * length, every character's prefix must be hashed apart (about 2 µs
 * each), so the scan stops here, well inside one 50 ms turn of the event
 * loop. Only a thread paused across the upgrade that added lengths has
 * bare digests; a longer repeated text of it is shown again.
 */
export const BARE_DIGEST_SCAN_UNITS = 4096;

/**
 * Length (in UTF-16 units) of the longest prefix of `text` whose digest is
 * known, 0 if none. One pass over the text: it is hashed up to the longest
 * known length that fits, and the digest checked only at the known
 * lengths (never inside a surrogate pair). Bare digests are looked for
 * character by character, within the first BARE_DIGEST_SCAN_UNITS. Given
 * `hash` (a fresh one), the text's hash is left there, as far as it got, for
 * the caller to go on with.
 */
export function replayedPrefixLength(text: string, known: KnownTexts, hash = new TextHash()): number {
  let longest = 0;
  for (const length of known.lengths) {
    if (length > text.length) break;
    if (splitsCharacter(text, length)) continue;
    hash.update(text.slice(hash.length, length));
    if (known.digests.has(hash.digest())) longest = length;
  }
  return known.bare.size === 0 ? longest : Math.max(longest, bareDigestPrefixLength(text, known.bare));
}

function bareDigestPrefixLength(text: string, bare: ReadonlySet<string>): number {
  const hash = new TextHash();
  let longest = 0;
  for (const character of text) {
    if (hash.length + character.length > BARE_DIGEST_SCAN_UNITS) break;
    hash.update(character);
    if (bare.has(hash.sha256())) longest = hash.length;
  }
  return longest;
}

/** What one lane of text (the agent's, or one pipeline message) has shown in this run. */
interface Lane {
  /** The kernel message the lane's text belongs to now. */
  kernelId?: string;
  /** The AG-UI message its text goes to, while open. */
  openId?: string;
  /** The assistant message of the lane's current turn: its text message, or one holding only tool calls. */
  turnId?: string;
  /** The tool call whose result ended the lane's last turn. */
  after?: string;
  /** The id its next message would get, kept while nothing changes it (thinking asks on every chunk). */
  nextId?: string;
  /** A pipeline message's coordinates (its id split at ":"), the step attempts whose end closes it; set on its first text. */
  coordinates?: string[];
}

/**
 * A lane with every field present: all lanes then share one shape, and the
 * per-delta reads of `append` stay monomorphic (lanes built up field by
 * field took a different shape each).
 */
const newLane = (): Lane => ({
  kernelId: undefined,
  openId: undefined,
  turnId: undefined,
  after: undefined,
  nextId: undefined,
  coordinates: undefined,
});

const AGENT_LANE = "agent";

const listOf = (out: AGUIEvent | AGUIEvent[]): AGUIEvent[] => (Array.isArray(out) ? out : [out]);

export function projectText(options: ProjectTextOptions): OperatorFunction<RunItem, RunItem> {
  const { runId } = options;
  const pipelineScope = options.pipelineScope ?? runId;
  const newMessageId = options.newMessageId ?? (() => `assistant-${crypto.randomUUID().replaceAll("-", "")}`);
  const known = knownTexts(options.knownDigests ?? []);
  const resumed = known.lengths.length > 0 || known.bare.size > 0;
  // Made apart from `source`: the handlers live as long as the run's stream, and would keep the stages upstream.
  const projector = () => {
    const lanes = new Map<string, Lane>();
    const laneOf = (key: string): Lane => {
      let lane = lanes.get(key);
      if (lane === undefined) lanes.set(key, (lane = newLane()));
      return lane;
    };
    const agent = laneOf(AGENT_LANE);
    const scopeOf = (lane: Lane) => (lane === agent ? runId : pipelineScope);
    let textEmitted = false;
    /** Each message of this run, in order of first text: the hash of its whole text so far, as the kernel sent it. */
    const sent = new Map<string, TextHash>();

    const close = (lane: Lane): AGUIEvent[] => {
      if (lane.openId === undefined) return [];
      const end: AGUIEvent = { type: EventType.TEXT_MESSAGE_END, messageId: lane.openId };
      lane.openId = undefined;
      return [end];
    };

    /** What of `text` is new to the client: all of it, unless it repeats an earlier run's message. */
    const unseen = (messageId: string, text: string, replayable: boolean): string => {
      const hash = sent.get(messageId);
      if (hash !== undefined) {
        hash.update(text);
        return text;
      }
      // The digest is of the whole text, repeated part included: the kernel repeats all of it after the next resume too.
      // The resume check hashes the text's first part; the rest is hashed on from there, so the text is hashed once.
      const first = new TextHash();
      sent.set(messageId, first);
      const replayed = replayable && resumed ? replayedPrefixLength(text, known, first) : 0;
      first.update(text.slice(first.length));
      return replayed === 0 ? text : text.slice(replayed);
    };

    /** The delta's CONTENT, alone (no array) while its message is open: this runs on every delta. */
    const append = (lane: Lane, kernelId: string, text: string, pipeline = false): AGUIEvent | AGUIEvent[] => {
      // The open message's id is kept, not built again.
      const messageId =
        lane.openId !== undefined && lane.kernelId === kernelId ? lane.openId : runMessageId(scopeOf(lane), kernelId, lane.after);
      const delta = unseen(messageId, text, !pipeline);
      if (!delta) return [];
      // Its slot for the timestamp `stampTime` adds is made with it: added later, it took a second allocation.
      const content: AGUIEvent = { type: EventType.TEXT_MESSAGE_CONTENT, messageId, delta, timestamp: undefined };
      let out: AGUIEvent | AGUIEvent[] = content;
      if (lane.openId !== messageId) {
        out = [...close(lane), { type: EventType.TEXT_MESSAGE_START, messageId, role: "assistant" }, content];
        lane.openId = messageId;
      }
      if (lane.kernelId !== kernelId) lane.nextId = undefined;
      lane.kernelId = kernelId;
      lane.turnId = messageId;
      textEmitted = true;
      return out;
    };

    const project = (signal: SignalOf<"text">): AGUIEvent | AGUIEvent[] => {
      if (!signal.text) return [];
      if (signal.pipeline) {
        const { messageId } = signal;
        const lane = laneOf(messageId ?? AGENT_LANE);
        // Read off the lane, not a second map: this runs on every pipeline delta.
        if (messageId !== undefined && lane.coordinates === undefined) {
          lane.coordinates = messageId.split(":");
          pipelineLanes.push(lane);
        }
        return append(lane, messageId ?? newMessageId(), signal.text, true);
      }
      if (signal.source === "delta") {
        const kernelId = signal.messageId ?? (agent.openId !== undefined ? agent.kernelId : undefined) ?? newMessageId();
        return append(agent, kernelId, signal.text);
      }
      if (textEmitted) return signal.source === "final" ? close(agent) : [];
      return [...listOf(append(agent, signal.messageId ?? newMessageId(), signal.text)), ...close(agent)];
    };

    /** A call goes in its turn's message; its result ends the turn, and the lane's text after it is a new message. */
    const placeTool = (signal: SignalOf<"tool">): RunItem[] => {
      const lane = laneOf(signal.messageId ?? AGENT_LANE);
      if (signal.status === "started" || signal.status === "input_complete") {
        lane.turnId ??= toolTurnMessageId(scopeOf(lane), signal.toolCallId);
        return [{ ...signal, parentMessageId: lane.turnId }];
      }
      lane.turnId = undefined;
      lane.after = signal.toolCallId;
      lane.nextId = undefined;
      return [...close(lane), signal];
    };

    /** Thinking goes beside the message its lane shows now, or would show next. */
    const placeReasoning = (signal: SignalOf<"reasoning">): RunItem => {
      const lane = laneOf(signal.messageId ?? AGENT_LANE);
      const messageId =
        lane.openId ?? (lane.nextId ??= runMessageId(scopeOf(lane), signal.messageId ?? lane.kernelId ?? AGENT_LANE, lane.after));
      return { ...signal, messageId };
    };

    /** The lanes of pipeline messages, in the order of their first text. */
    const pipelineLanes: Lane[] = [];

    /** The open messages of the step attempt `stepRunId` and of everything inside it. */
    const closeStep = (stepRunId: string): AGUIEvent[] => {
      const out: AGUIEvent[] = [];
      for (const lane of pipelineLanes) if (lane.coordinates!.includes(stepRunId)) out.push(...close(lane));
      return out;
    };

    return (item: RunItem): RunItem | RunItem[] => {
      if (!isSignal(item)) {
        if (item.type !== EventType.STEP_FINISHED || pipelineLanes.length === 0) return item;
        const stepRunId = stepFactsFrom(item)?.stepRunId;
        return stepRunId === undefined ? item : [...closeStep(stepRunId), item];
      }
      switch (item.kind) {
        case "text":
          return project(item);
        case "tool":
          return placeTool(item);
        case "reasoning":
          return [placeReasoning(item)];
        case "run-end":
          return sent.size > 0 ? [{ ...item, textDigests: [...sent.values()].map((hash) => hash.digest()) }] : item;
        default:
          return item;
      }
    };
  };
  return (source) => defer(() => source.pipe(emitEach(projector())));
}
