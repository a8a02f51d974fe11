/**
 * The canonical digest of wire contract §8: SHA-256 (lowercase hex) of JSON
 * with keys sorted at every depth, `,` and `:` separators and non-ASCII kept
 * as UTF-8, i.e. Python's `json.dumps(v, sort_keys=True, separators=(",", ":"),
 * ensure_ascii=False)`. Digests are compared with ones the reference adapter
 * computed, so the text must match Python's byte for byte where it can.
 * That is why it is not `canonicalJson` (lib/model/json.ts), whose key order
 * is JavaScript's (integer-like keys first) and which writes NaN as `null`.
 */
import { createHash } from "node:crypto";

/** Python sorts keys by code point; JavaScript's default sort compares UTF-16 units, which differs above U+FFFF. */
function byCodePoint(a: string, b: string): number {
  const left = Array.from(a);
  const right = Array.from(b);
  for (let i = 0; i < Math.min(left.length, right.length); i++) {
    const difference = (left[i]!.codePointAt(0) ?? 0) - (right[i]!.codePointAt(0) ?? 0);
    if (difference !== 0) return difference;
  }
  return left.length - right.length;
}

const SURROGATE = /[\uD800-\uDFFF]/;

/**
 * Keys sorted as Python sorts them. UTF-16 order and code-point order differ
 * only where a surrogate meets a unit above it, so keys without one (nearly
 * all) take the plain sort, with no per-comparison arrays: every run's
 * request is digested on the way to its first event.
 */
const inCodePointOrder = (keys: string[]): string[] => (keys.some((key) => SURROGATE.test(key)) ? keys.sort(byCodePoint) : keys.sort());

/** The text the digest hashes; throws on what Python and JavaScript would write differently. */
function digestText(value: unknown, where: string): string {
  if (value !== null && typeof value === "object" && typeof (value as { toJSON?: unknown }).toJSON === "function") {
    value = (value as { toJSON: () => unknown }).toJSON();
  }
  if (value === null || typeof value === "boolean" || typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number") {
    // Python would write NaN/Infinity, JSON.stringify null: no text both agree on.
    if (!Number.isFinite(value)) throw new TypeError(`canonicalDigest: non-finite number at ${where}`);
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) {
    return `[${value.map((item, i) => (item === undefined || typeof item === "function" || typeof item === "symbol" ? "null" : digestText(item, `${where}/${i}`))).join(",")}]`;
  }
  if (typeof value === "object") {
    const record = value as Record<string, unknown>;
    let text = "{";
    for (const key of inCodePointOrder(Object.keys(record))) {
      const item = record[key];
      if (item === undefined || typeof item === "function" || typeof item === "symbol") continue;
      text += `${text.length > 1 ? "," : ""}${JSON.stringify(key)}:${digestText(item, `${where}/${key}`)}`;
    }
    return `${text}}`;
  }
  throw new TypeError(`canonicalDigest: ${typeof value} is not JSON at ${where}`);
}

/** SHA-256 (lowercase hex) of the canonical JSON text of `value`, as UTF-8. */
export function canonicalDigest(value: unknown): string {
  return createHash("sha256").update(digestText(value, ""), "utf8").digest("hex");
}
