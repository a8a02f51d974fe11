/**
 * The resume entries of one request against the pending interrupts (R-RES-2,
 * R-RES-5), before any payload is looked at or anything is sent.
 */
import type { ResumeEntry } from "@ag-ui/core";
import { AguiError } from "../errors.js";
import { detailParams } from "../i18n/detail.js";
import { canonicalDigest } from "../state/canonical-digest.js";
import type { PendingInput } from "../state/thread-state.js";

type Entry = Pick<ResumeEntry, "interruptId" | "status" | "payload">;

/**
 * The applied-resume digest of contract §8, `digest({status, payload})`. An
 * absent payload is written as null, as the reference's Python None is, so
 * digests it persisted still match.
 */
export function resumeDigest(entry: Entry): string {
  return canonicalDigest({ status: entry.status, payload: entry.payload ?? null });
}

/**
 * Returns the entries in the order the interrupts were raised (the pending
 * record's order), whatever order the client listed them in, so the kernel
 * receives answers in the order it asked. Throws, checking in this order:
 * - `INCOMPLETE_RESUME` (reason `duplicate`) for an id listed twice;
 * - `RESUME_ALREADY_APPLIED` for an id whose answer was already accepted,
 *   identical or not (reason `differentAnswer` when not): an answer is never
 *   sent twice, so a tool never runs twice;
 * - `UNKNOWN_INTERRUPT` for an id that is neither pending nor applied;
 * - `INCOMPLETE_RESUME` when a pending interrupt has no entry.
 *
 * `applied` gives the stored digest of an accepted answer (contract §8
 * `appliedResumeDigests`), `digestOf` the digest of an entry in the same form.
 */
export function checkResumeEntries<E extends Entry>(
  pending: Readonly<Record<string, PendingInput>>,
  entries: readonly E[],
  applied: (interruptId: string) => string | undefined,
  digestOf: (entry: E) => string = resumeDigest,
): E[] {
  const byId = new Map<string, E>();
  for (const entry of entries) {
    if (byId.has(entry.interruptId)) throw new AguiError("INCOMPLETE_RESUME", { reason: "duplicate" });
    byId.set(entry.interruptId, entry);
  }
  entries.forEach((entry, index) => {
    // A position reads the same in every language.
    const where = { detail: `/resume/${index}` };
    const stored = applied(entry.interruptId);
    if (stored !== undefined) {
      throw new AguiError("RESUME_ALREADY_APPLIED", stored === digestOf(entry) ? where : { reason: "differentAnswer", ...where });
    }
    if (!Object.hasOwn(pending, entry.interruptId)) throw new AguiError("UNKNOWN_INTERRUPT", where);
  });
  const unanswered = Object.keys(pending).filter((id) => !byId.has(id)).length;
  if (unanswered > 0) throw new AguiError("INCOMPLETE_RESUME", detailParams("/resume", "unanswered", { count: unanswered }));
  return Object.keys(pending).map((id) => byId.get(id)!);
}
