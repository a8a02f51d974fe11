/**
 * The file name of a thread's state (wire contract §8, "File stem rules").
 * The rules make the mapping injective even on case-insensitive file
 * systems: a raw stem is all lowercase, every other id is hex-encoded (or
 * hashed), and `~` never occurs in a raw stem, so the three forms cannot
 * meet. Windows device names and trailing dots are avoided because Windows
 * silently maps `con.json` to the console and strips a trailing dot.
 */
import { createHash } from "node:crypto";

/**
 * Every stem, raw ones included, stays within this length. The contract caps
 * only the hex form; a raw id is capped too, because `<stem>.json` must fit
 * the 255-byte name limit of common file systems. A longer raw id falls
 * through to the hashed form.
 */
export const MAX_STEM_LENGTH = 200;

const RAW_STEM = /^[A-Za-z0-9_.-]+$/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

const WINDOWS_RESERVED = new Set(["CON", "PRN", "AUX", "NUL", ...[1, 2, 3, 4, 5, 6, 7, 8, 9].flatMap((n) => [`COM${n}`, `LPT${n}`])]);

function isRawStem(threadId: string): boolean {
  return (
    threadId.length <= MAX_STEM_LENGTH &&
    RAW_STEM.test(threadId) &&
    threadId === threadId.toLowerCase() &&
    threadId !== "." &&
    threadId !== ".." &&
    !threadId.endsWith(".") &&
    !WINDOWS_RESERVED.has((threadId.split(".")[0] ?? "").toUpperCase())
  );
}

/**
 * The stem of `<stateDir>/threads/<stem>.json` for a thread id. Throws a
 * RangeError for an id holding a lone UTF-16 surrogate: UTF-8 cannot encode
 * it, and replacing it (as `Buffer.from` would) would let two ids share a file.
 */
export function threadFileStem(threadId: string): string {
  if (isRawStem(threadId)) return threadId;
  if (LONE_SURROGATE.test(threadId)) throw new RangeError("thread id is not well-formed Unicode (lone surrogate)");
  const utf8 = Buffer.from(threadId, "utf8");
  const hexStem = `aguiid~${utf8.toString("hex")}`;
  if (hexStem.length <= MAX_STEM_LENGTH) return hexStem;
  return `aguihash~${createHash("sha256").update(utf8).digest("hex")}`;
}
