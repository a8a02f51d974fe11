/**
 * What the service keeps of a text the client was shown, so that a later
 * run can leave out what the kernel repeats of it (contract §6): the SHA-256
 * of its UTF-8, and its length, never the text (R-PER-3).
 *
 * A digest is written `<sha256 hex>:<length>`, the length in UTF-16 code
 * units (what a JavaScript string's `length` counts). Knowing the lengths,
 * a resume hashes a long first text once, checking only at those lengths;
 * without them it would have to check a digest after every character.
 * States written before lengths were kept hold the bare hex (`legacy`).
 */
import * as crypto from "node:crypto";
import { createHash, type Hash } from "node:crypto";

export interface ParsedTextDigest {
  sha256: string;
  /** Undefined for a bare digest (a state written before lengths were kept). */
  length?: number;
}

const WITH_LENGTH = /^([0-9a-f]{64}):(0|[1-9][0-9]*)$/;

export function parseTextDigest(digest: string): ParsedTextDigest {
  const match = WITH_LENGTH.exec(digest);
  return match ? { sha256: match[1]!, length: Number(match[2]) } : { sha256: digest };
}

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;
const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff;

/** Whether cutting `text` before `index` would split a surrogate pair (one astral character). */
export const splitsCharacter = (text: string, index: number): boolean =>
  index > 0 && index < text.length && isHighSurrogate(text.charCodeAt(index - 1)) && isLowSurrogate(text.charCodeAt(index));

/** Pending text is hashed once it is this long (UTF-16 code units). */
const HASHED_FROM = 16 * 1024;

/**
 * The SHA-256 (hex) of a text at once: `crypto.hash` where Node has it
 * (20.12 on), a third of the cost of a hash object, which is a native
 * handle the collector must finalize.
 */
const sha256Of: (text: string) => string =
  typeof (crypto as { hash?: unknown }).hash === "function"
    ? (text) => crypto.hash("sha256", text, "hex")
    : (text) => createHash("sha256").update(text, "utf8").digest("hex");

/**
 * The digest of a text that arrives in pieces, without keeping the pieces:
 * the same as `textDigest` of their concatenation, however the text was cut.
 * A piece may end in the first half of a surrogate pair whose second half
 * starts the next piece; hashed alone, each half would be encoded as
 * U+FFFD, so a trailing high surrogate waits for the next piece.
 */
export class TextHash {
  /**
   * Made only for a text that outgrows `HASHED_FROM`, or that is asked for
   * its digest more than once: most messages are shorter, and their one
   * digest is hashed at once from `#pending` (a hash object per message
   * was most of what the digests cost a run).
   */
  #hash: Hash | undefined;
  /** `sha256` was asked before: the next asks go on from a hash object, so a scan that asks per character stays linear. */
  #asked = false;
  #length = 0;
  /**
   * What came since the last `update` of the hash: pieces are joined here
   * and hashed a few KiB at a time, since one call into the hash costs more
   * than a small delta's bytes. Never more than `HASHED_FROM` code units.
   */
  #pending = "";

  update(piece: string): void {
    if (piece.length === 0) return;
    this.#length += piece.length;
    this.#pending += piece;
    if (this.#pending.length >= HASHED_FROM) this.#hashPending();
  }

  /** Hashes what is pending, but a trailing high surrogate: its low half may start the next piece. */
  #hashPending(): void {
    const text = this.#pending;
    const end = isHighSurrogate(text.charCodeAt(text.length - 1)) ? text.length - 1 : text.length;
    (this.#hash ??= createHash("sha256")).update(end === text.length ? text : text.slice(0, end), "utf8");
    this.#pending = text.slice(end);
  }

  /** UTF-16 code units hashed so far. */
  get length(): number {
    return this.#length;
  }

  /** The SHA-256 (hex) of everything hashed so far; the hash goes on. A lone high surrogate at the end counts as U+FFFD, as in the whole text. */
  sha256(): string {
    if (this.#hash === undefined && !this.#asked) {
      this.#asked = true;
      return sha256Of(this.#pending);
    }
    // Hashed first, not added to the copy alone: a caller asking after every character (a bare digest's scan) hashes each once.
    if (this.#pending !== "") this.#hashPending();
    const hash = (this.#hash ??= createHash("sha256")).copy();
    if (this.#pending !== "") hash.update(this.#pending, "utf8");
    return hash.digest("hex");
  }

  /** The digest of everything hashed so far, with its length; the hash goes on. */
  digest(): string {
    return `${this.sha256()}:${this.#length}`;
  }
}

/** The digest of a whole text. */
export function textDigest(text: string): string {
  const hash = new TextHash();
  hash.update(text);
  return hash.digest();
}
