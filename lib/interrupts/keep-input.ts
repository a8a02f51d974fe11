/**
 * Kernel input projections (`metadata.iac_code.input`, `pendingPermissions[]`)
 * → the kept, persistable form (wire contract §5 "Fields kept and persisted").
 */
import { randomUUID } from "node:crypto";
import { KEPT_INPUT_FIELDS, type InputProjection } from "../state/thread-state.js";
import { pythonJsonDumps } from "./python-json.js";
import type { KernelInput } from "../model/kernel-signal.js";
import { isJsonObject, isNonEmptyString } from "../model/json.js";

export type RawProjection = Record<string, unknown>;

/** A projection that should become an interrupt, and whether it is answered out of band. */
export interface FoundInput {
  value: InputProjection;
  sideband: boolean;
}

const randomHex = () => randomUUID().replaceAll("-", "");

/**
 * Only the allowlisted fields survive: a projection may carry tool input or
 * other data that must never be persisted or shown. `newId` yields the 32
 * hex digits of a generated `input-<hex>` id; it is a parameter so tests and
 * replays are deterministic.
 */
export function keepInput(raw: RawProjection, newId: () => string = randomHex): InputProjection {
  const kept: Record<string, unknown> = {};
  for (const field of KEPT_INPUT_FIELDS) {
    if (Object.hasOwn(raw, field) && raw[field] !== undefined) kept[field] = structuredClone(raw[field]);
  }
  kept.inputId = kernelInputId(raw) ?? `input-${newId()}`;
  return kept as InputProjection;
}

/** The id the kernel gave the projection, if any (numbers arrive from protobuf Structs). */
function kernelInputId(raw: RawProjection): string | undefined {
  const id = raw.inputId;
  if (isNonEmptyString(id)) return id;
  return typeof id === "number" ? String(id) : undefined;
}

/** Only `required: true` (not merely truthy) asks for an answer. */
export function isRequiredInput(raw: unknown): raw is RawProjection {
  return isJsonObject(raw) && raw.required === true;
}

/** Sub-pipeline and candidate waits run beside the main task and are answered with SendMessage (contract §5). */
function isSidebandInput(raw: RawProjection): boolean {
  return raw.scope === "candidate" || typeof raw.subPipelineId === "string";
}

/**
 * Every required projection of one event's `metadata.iac_code`, `input`
 * first, each once. Projections without an id are told apart by their
 * canonical JSON, as the reference does. The same id may arrive both as the
 * direct input and in `pendingPermissions` (a GetTask snapshot): the first
 * copy is kept and it is sideband if either says so.
 */
export function inputsOf(iacCodeMetadata: unknown, newId: () => string = randomHex): FoundInput[] {
  if (!isJsonObject(iacCodeMetadata)) return [];
  const permissions = Array.isArray(iacCodeMetadata.pendingPermissions) ? iacCodeMetadata.pendingPermissions : [];
  const candidates = [
    { raw: iacCodeMetadata.input, fromPermissions: false },
    ...permissions.map((raw: unknown) => ({ raw, fromPermissions: true })),
  ];
  const found = new Map<string, FoundInput>();
  for (const { raw, fromPermissions } of candidates) {
    if (!isRequiredInput(raw)) continue;
    const sideband = fromPermissions || isSidebandInput(raw);
    const id = kernelInputId(raw);
    const key = id !== undefined ? `id:${id}` : `json:${pythonJsonDumps(raw, { sortKeys: true })}`;
    const seen = found.get(key);
    if (seen) seen.sideband ||= sideband;
    else found.set(key, { value: keepInput(raw, newId), sideband });
  }
  return [...found.values()];
}

/**
 * The inputs a frame's `metadata.iac_code` waits on, as kernel signals carry
 * them: only the kept fields of each projection travel on, so nothing else
 * of it can reach a client or the disk. This is `toKernelSignals`'s
 * `findInputs`.
 */
export function kernelInputsOf(iacCodeMetadata: unknown): KernelInput[] {
  return inputsOf(iacCodeMetadata).map(({ value, sideband }) => ({ projection: value, sideband }));
}
