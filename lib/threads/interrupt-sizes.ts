/**
 * How much of a pause's interrupts the service repeats. An interrupt is
 * shown several times over what is stored of it (its options in the
 * message, the response schema and the metadata, about five times the
 * stored bytes), so the state cap alone would let a kernel's question of
 * 4 MiB come back as a `RUN_FINISHED` of 20 MiB, and again in every 409
 * that refuses a later message. Two bounds, on what is sent:
 *
 * - a pause whose interrupts would be shown larger than the state cap is
 *   refused as a state too large is: nothing is offered, the task is
 *   cancelled (`thread-run.ts`);
 * - a 409 `RESUME_REQUIRED` repeats the interrupts whole only while they
 *   are small; past that it names them (id, reason, tool call, expiry) and
 *   says it left the rest out. The connect route still gives them whole.
 */
import type { Interrupt } from "@ag-ui/core";
import { MAX_THREAD_STATE_BYTES } from "../state/thread-state-codec.js";

/** The most a pause's interrupts may weigh as `RUN_FINISHED` carries them: never more than a stored state may. */
export const MAX_SHOWN_INTERRUPTS_BYTES = MAX_THREAD_STATE_BYTES;

/** The most of them a 409 `RESUME_REQUIRED` repeats whole, on every message it refuses. */
export const MAX_REPEATED_INTERRUPTS_BYTES = 64 * 1024;

export const jsonBytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value), "utf8");

/** The interrupts as a 409 names them: whole while small, else only what tells them apart and when they expire. */
export function repeatedInterrupts(interrupts: readonly Interrupt[]): { interrupts: Interrupt[]; interruptsAbridged?: true } {
  if (jsonBytes(interrupts) <= MAX_REPEATED_INTERRUPTS_BYTES) return { interrupts: [...interrupts] };
  const named = interrupts.map(({ id, reason, toolCallId, expiresAt }) => ({
    id,
    reason,
    ...(toolCallId === undefined ? {} : { toolCallId }),
    ...(expiresAt === undefined ? {} : { expiresAt }),
  }));
  return { interrupts: named, interruptsAbridged: true };
}
