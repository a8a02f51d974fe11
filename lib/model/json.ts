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
