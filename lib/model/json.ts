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
  // A tool call's arguments mostly come with their keys in order already: JSON.stringify alone then writes the same text.
  if (inCanonicalOrder(value, 0)) return JSON.stringify(value) ?? "null";
  return (
    JSON.stringify(value, (_key, inner: unknown) =>
      inner && typeof inner === "object" && !Array.isArray(inner)
        ? Object.fromEntries(Object.entries(inner).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
        : inner,
    ) ?? "null"
  );
}

/** How deep `inCanonicalOrder` looks before it leaves a value to the general way (which also reports a cycle). */
const ORDER_CHECK_DEPTH = 32;

/**
 * Whether JSON.stringify writes `value` with `canonicalJson`'s key order:
 * every object's keys already ascending, none of them integer-like (those
 * JavaScript moves first, which only the general way accounts for), and
 * only plain objects (a class's, a boxed value's or a `toJSON`'s text is left
 * to the general way). Conservative: false sends the value the general way,
 * never a different text.
 */
function inCanonicalOrder(value: unknown, depth: number): boolean {
  if (value === null || typeof value !== "object") return true;
  if (depth > ORDER_CHECK_DEPTH) return false;
  if (Array.isArray(value)) {
    for (const item of value) if (!inCanonicalOrder(item, depth + 1)) return false;
    return true;
  }
  const record = value as Record<string, unknown>;
  const prototype = Object.getPrototypeOf(record) as unknown;
  if ((prototype !== Object.prototype && prototype !== null) || typeof record.toJSON === "function") return false;
  let previous: string | undefined;
  for (const key of Object.keys(record)) {
    const first = key.charCodeAt(0);
    if (first >= 0x30 && first <= 0x39) return false;
    if (previous !== undefined && !(previous < key)) return false;
    if (!inCanonicalOrder(record[key], depth + 1)) return false;
    previous = key;
  }
  return true;
}
