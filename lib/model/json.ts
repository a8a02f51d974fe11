/**
 * Reading untyped JSON (wire frames, stored documents, request bodies)
 * field by field: the narrowing every reader of a parsed value needs.
 */

/** A JSON object as parsed: string keys, values still to be checked. */
export type JsonObject = Record<string, unknown>;

/** An object, not `null` and not an array: a value whose fields can be read. */
export const isJsonObject = (value: unknown): value is JsonObject => typeof value === "object" && value !== null && !Array.isArray(value);

/** A string with at least one character: an empty id or name counts as absent. */
export const isNonEmptyString = (value: unknown): value is string => typeof value === "string" && value !== "";

/** `value` if it is a non-empty string, else undefined, so a fallback can follow with `??`. */
export const nonEmptyString = (value: unknown): string | undefined => (isNonEmptyString(value) ? value : undefined);

/**
 * JSON with no spaces and object keys in one fixed order at every depth, so
 * equal values always read the same: tool-call arguments, and comparing
 * state values. It is JSON.stringify's text otherwise (`undefined` and NaN
 * become `null`), and the key order is JavaScript's: integer-like keys
 * first, in numeric order ("2" before "10"), then the rest by UTF-16 code
 * units. The contract's digest (`lib/state/canonical-digest.ts`) must match
 * Python's `sort_keys=True` text instead, so it orders every key as a string
 * by code point and refuses what JSON cannot hold: the two are not
 * interchangeable.
 */
export function canonicalJson(value: unknown): string {
  return (
    JSON.stringify(value, (_key, inner: unknown) =>
      inner && typeof inner === "object" && !Array.isArray(inner)
        ? Object.fromEntries(Object.entries(inner).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
        : inner,
    ) ?? "null"
  );
}
