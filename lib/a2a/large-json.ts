/**
 * JSON too large to parse or encode in one step without stalling every
 * other stream of the process: a kernel record of 15 MiB (a tool's result)
 * is about 60 ms of `JSON.parse` and as much again of `JSON.stringify`, on
 * one event loop that all the runs share (issue 20: no step of one run
 * over 50 ms).
 *
 * What makes such a record large is nearly always a few long strings (a
 * file, a command's output), not many small values. So the long string
 * literals are cut out of the text and replaced by placeholders, the rest
 * (small) is parsed natively in one go, and each long string is decoded by
 * the native parser a slice at a time, the loop let go between slices.
 * Encoding is the same in reverse: the value with its long strings left
 * out is stringified at once, and each long string escaped a slice at a
 * time (`jsonPieces`), for a writer to send piece by piece.
 *
 * The result is exactly `JSON.parse`'s and `JSON.stringify`'s (the same
 * value, the same text, the same SyntaxError for text that is no JSON),
 * only spread over several turns of the loop. A record whose bulk is many
 * small values gains nothing here; it is parsed whole, as before.
 */
import { randomBytes } from "node:crypto";

/** Over this many characters, text is parsed in slices (`parseJsonInSlices`), and an event encoded in pieces. */
export const LARGE_JSON_CHARS = 1024 * 1024;
/** A string literal this long is decoded or escaped on its own, in slices. */
const LONG_STRING_CHARS = 64 * 1024;
/** Characters a slice of work covers: about 2–5 ms of native parsing or escaping on this kind of machine. */
export const JSON_SLICE_CHARS = 512 * 1024;

/** Lets the event loop run other work before the next slice: timers, I/O, other runs' events. */
export type YieldToLoop = () => Promise<void>;
export const nextTurn: YieldToLoop = () => new Promise((resolve) => setImmediate(resolve));

const BACKSLASH = 92; // \

/** A long string literal in the text: its quotes' positions. */
interface LongLiteral {
  open: number;
  close: number;
}

/**
 * `JSON.parse(text)`, letting the loop run between slices of the work
 * when `text` is large. Rejects as `JSON.parse` throws.
 */
export async function parseJsonInSlices(text: string, yieldToLoop: YieldToLoop = nextTurn): Promise<unknown> {
  if (text.length < LARGE_JSON_CHARS) return JSON.parse(text);
  const literals = await longLiterals(text, yieldToLoop);
  // Text the scan cannot read (an unclosed string) is no JSON: the native parser says why.
  if (literals === undefined || literals.length === 0) return JSON.parse(text);
  const marker = placeholderMarker();
  const skeleton: string[] = [];
  let from = 0;
  literals.forEach(({ open, close }, index) => {
    skeleton.push(text.slice(from, open), JSON.stringify(`${marker}${index}`));
    from = close + 1;
  });
  skeleton.push(text.slice(from));
  const value: unknown = JSON.parse(skeleton.join(""));
  const decoded: string[] = [];
  for (const { open, close } of literals) decoded.push(await decodeLiteral(text, open + 1, close, yieldToLoop));
  return putBack(value, marker, decoded);
}

/**
 * The string literals of `text` at least LONG_STRING_CHARS long, found by
 * jumping from quote to quote; undefined when a string never closes.
 */
async function longLiterals(text: string, yieldToLoop: YieldToLoop): Promise<LongLiteral[] | undefined> {
  const found: LongLiteral[] = [];
  let at = 0;
  let scannedSinceYield = 0;
  for (;;) {
    const open = text.indexOf('"', at);
    if (open === -1) return found;
    let close = open;
    do {
      close = text.indexOf('"', close + 1);
      if (close === -1) return undefined;
    } while (isEscaped(text, close));
    if (close - open - 1 >= LONG_STRING_CHARS) found.push({ open, close });
    scannedSinceYield += close + 1 - at;
    at = close + 1;
    if (scannedSinceYield >= 8 * JSON_SLICE_CHARS) {
      scannedSinceYield = 0;
      await yieldToLoop();
    }
  }
}

/** Whether the character at `index` is escaped: an odd run of backslashes before it. */
function isEscaped(text: string, index: number): boolean {
  let before = index - 1;
  while (text.charCodeAt(before) === BACKSLASH) before--;
  return (index - 1 - before) % 2 === 1;
}

/** The string between the quotes at `start - 1` and `end`, decoded a slice at a time. */
async function decodeLiteral(text: string, start: number, end: number, yieldToLoop: YieldToLoop): Promise<string> {
  const parts: string[] = [];
  for (let from = start; from < end;) {
    const to = sliceEnd(text, from, end);
    await yieldToLoop();
    parts.push(JSON.parse(`"${text.slice(from, to)}"`) as string);
    from = to;
  }
  return parts.join("");
}

/** Where a slice from `from` may end before `end`: never inside an escape sequence (`\n`, `\"`, `\uXXXX`). */
function sliceEnd(text: string, from: number, end: number): number {
  const cut = Math.min(from + JSON_SLICE_CHARS, end);
  if (cut === end) return cut;
  // An escape is at most 6 characters: only a backslash among the last 5 before the cut can start one that spans it.
  for (let at = cut - 1; at >= cut - 5; at--) {
    if (text.charCodeAt(at) !== BACKSLASH) continue;
    // The last backslash before the cut: it starts an escape if it is not itself escaped.
    if (isEscaped(text, at)) return cut;
    const length = text.charCodeAt(at + 1) === 117 /* u */ ? 6 : 2;
    return at + length > cut ? at : cut;
  }
  return cut;
}

/** A prefix no string of the document can plausibly have: a NUL and 128 random bits. */
function placeholderMarker(): string {
  return `\u0000large-json-${randomBytes(16).toString("hex")}-`;
}

/** `value` with each placeholder (as a value, or as a key) replaced by its decoded string. */
function putBack(value: unknown, marker: string, decoded: readonly string[]): unknown {
  const original = (text: string) => (text.startsWith(marker) ? decoded[Number(text.slice(marker.length))] : undefined);
  const visit = (node: unknown): unknown => {
    if (typeof node === "string") return original(node) ?? node;
    if (node === null || typeof node !== "object") return node;
    if (Array.isArray(node)) {
      for (let index = 0; index < node.length; index++) node[index] = visit(node[index]);
      return node;
    }
    const record = node as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      const child = visit(record[key]);
      const longKey = original(key);
      if (longKey === undefined) {
        record[key] = child;
        continue;
      }
      delete record[key];
      // As JSON.parse makes it: an own property, even for "__proto__".
      Object.defineProperty(record, longKey, { value: child, enumerable: true, writable: true, configurable: true });
    }
    return record;
  };
  return visit(value);
}

/**
 * `JSON.stringify(value)` as pieces, each at most about JSON_SLICE_CHARS of
 * escaping work: the value without its long strings at once, then each
 * long string a slice at a time. Joined, they are exactly
 * `JSON.stringify(value)`. Pulled lazily: a writer sends a piece, lets
 * the loop run, and asks for the next.
 */
export function* jsonPieces(value: unknown): Generator<string, void, undefined> {
  const marker = placeholderMarker();
  const long: string[] = [];
  const skeleton = JSON.stringify(value, (_key, child: unknown) => {
    if (typeof child !== "string" || child.length < LONG_STRING_CHARS) return child;
    long.push(child);
    return `${marker}${long.length - 1}`;
  });
  if (long.length === 0) {
    yield skeleton;
    return;
  }
  const quotedMarker = JSON.stringify(marker).slice(0, -1);
  let from = 0;
  for (let index = 0; index < long.length; index++) {
    const placeholder = `${quotedMarker}${index}"`;
    const at = skeleton.indexOf(placeholder, from);
    yield `${skeleton.slice(from, at)}"`;
    yield* escapedSlices(long[index]!);
    yield '"';
    from = at + placeholder.length;
  }
  yield skeleton.slice(from);
}

/** `JSON.stringify(text)` without its quotes, a slice at a time; a slice never ends between the halves of a surrogate pair. */
function* escapedSlices(text: string): Generator<string, void, undefined> {
  for (let from = 0; from < text.length;) {
    let to = Math.min(from + JSON_SLICE_CHARS, text.length);
    const last = text.charCodeAt(to - 1);
    if (to < text.length && last >= 0xd800 && last <= 0xdbff) to--;
    yield JSON.stringify(text.slice(from, to)).slice(1, -1);
    from = to;
  }
}

/** Whether an event is worth encoding in pieces: it holds a string long enough that escaping it at once would stall the loop. */
export function holdsLongString(value: unknown, atLeast = LARGE_JSON_CHARS): boolean {
  if (typeof value === "string") return value.length >= atLeast;
  if (value === null || typeof value !== "object") return false;
  for (const child of Array.isArray(value) ? value : Object.values(value)) if (holdsLongString(child, atLeast)) return true;
  return false;
}
