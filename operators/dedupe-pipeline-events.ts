/**
 * Drops the pipeline envelopes the client already has (contract §4 dedupe,
 * R-CUS-5), and carries the cursor — the highest sequence seen — to the
 * `run-end` signal as `pipelineSequence`, for the next run to start from.
 *
 *   live       dropped if its `eventId` was seen, or if its `sequence` is
 *              non-zero and not above the cursor
 *   recovered  dropped if its `eventId` was seen, or if it has no `eventId`
 *              and a non-zero `sequence` not above the cursor
 *
 *   cursor 5:  live(e1,#6) live(e1,#7) live(e2,#4) → live(e1,#6)
 *
 * A recovery snapshot's `lastSequence` raises the cursor only once the
 * recovered events that follow it are through: the snapshot says where the
 * kernel stood, but the recovered events are the ones after the cursor the
 * caller asked from, often below `lastSequence`, and each must still be
 * judged against the old cursor. Recovery is over when the next live
 * envelope, another snapshot or the run end arrives; the cursor becomes the
 * larger of the two then, before that item is judged or stamped.
 *
 * Everything else passes untouched. Sit this before `projectPipelineEvents`.
 */
import type { OperatorFunction } from "rxjs";
import { emitEachPer } from "./emit-each.js";
import { isSignal, type RunItem, type SignalOf } from "../lib/model/kernel-signal.js";

/**
 * A sequence as the kernel sends it: a whole, non-negative number, possibly
 * typed as a float (`12.0`) by protobuf's Struct. Anything else means "no
 * sequence", which never decides a drop.
 */
export function sequenceOf(value: unknown): number {
  return typeof value === "number" && Number.isInteger(value) && value > 0 ? value : 0;
}

export function dedupePipelineEvents(options: { cursor: number }): OperatorFunction<RunItem, RunItem> {
  return emitEachPer(() => {
    const seenEventIds = new Set<string>();
    let highest = sequenceOf(options.cursor);
    /** A snapshot's `lastSequence`, held back until its recovered events are through. */
    let pendingSnapshotSequence: number | undefined;

    const endRecovery = () => {
      if (pendingSnapshotSequence === undefined) return;
      highest = Math.max(highest, pendingSnapshotSequence);
      pendingSnapshotSequence = undefined;
    };

    const isNew = ({ envelope, recovered }: SignalOf<"pipeline-event">): boolean => {
      const eventId = typeof envelope.eventId === "string" && envelope.eventId !== "" ? envelope.eventId : undefined;
      const sequence = sequenceOf(envelope.sequence);
      if (eventId !== undefined && seenEventIds.has(eventId)) return false;
      // In recovery an eventId is the identity: an unseen one is kept even below the cursor (contract §4).
      const judgedBySequence = !recovered || eventId === undefined;
      if (judgedBySequence && sequence !== 0 && sequence <= highest) return false;
      if (eventId !== undefined) seenEventIds.add(eventId);
      highest = Math.max(highest, sequence);
      return true;
    };

    return (item): RunItem | RunItem[] => {
      if (!isSignal(item)) return item;
      switch (item.kind) {
        case "pipeline-snapshot":
          endRecovery();
          pendingSnapshotSequence = sequenceOf(item.snapshot.lastSequence);
          return item;
        case "pipeline-event":
          if (!item.recovered) endRecovery();
          return isNew(item) ? item : [];
        case "run-end":
          endRecovery();
          return [{ ...item, pipelineSequence: highest }];
        default:
          return item;
      }
    };
  });
}
