/**
 * The kernel's SSE body, bytes in, records out, in one pass over each chunk.
 *
 * The field rules are the HTML standard's (as `eventsource-parser` reads
 * them, which the property spec holds this to): lines end at LF, CR or
 * CRLF; a blank line ends a record; `data:` lines join with LF; `event:`
 * names the record; a line starting with `:` is a comment; one space after
 * the colon is dropped; `id:`, `retry:` and unknown fields are read and
 * ignored (a JSON-RPC stream is one POST, never reconnected); a record
 * without data is no record; a leading byte-order mark is dropped.
 *
 * Why not a text decoder and a string parser: the bytes were scanned for
 * record ends (to bound a record's size), decoded into a string, and split
 * again into lines, with a copy of each at every step. Here each line is
 * found once, in the bytes, and only a field's value is decoded, straight
 * from the chunk: a usual record, one `data:` line, costs two byte searches
 * and one decode. A line never ends inside a UTF-8 character (LF and CR
 * are never part of one), so decoding line by line gives what decoding the
 * whole stream would (a long line's pieces are decoded with
 * the bytes of a character cut between chunks kept for the next piece).
 */
import { protocolError } from "./rpc-errors.js";

/** One record of the stream: its `event:` field, if any, and its data lines joined. */
export interface SseRecord {
  event?: string;
  data: string;
}

const LF = 0x0a;
const CR = 0x0d;
const COLON = 0x3a;
const SPACE = 0x20;

/**
 * An unfinished line this long is decoded piece by piece as its chunks
 * come, not held as bytes to be joined and decoded at its end: a 15 MiB
 * tool result would otherwise be 30–60 ms of copying and decoding in one
 * step, stalling every other stream of the process (issue 20: no step
 * over 50 ms). Its pieces are joined once, when the line ends.
 */
const LONG_LINE_BYTES = 64 * 1024;

export class SseRecordParser {
  readonly #onRecord: (record: SseRecord) => void;
  readonly #maxRecordBytes: number;
  /** The unfinished line, as the chunks before this one held it. */
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  /** The unfinished line decoded so far, once it is long (then `#pending` is empty), and the bytes of a character cut at its end. */
  #pendingText: string | undefined;
  #carry: Buffer | undefined;
  /** Bytes of the open record in its finished lines. */
  #recordBytes = 0;
  #data: string | undefined;
  #event: string | undefined;
  /** The last chunk ended in a CR: an LF starting this one belongs to it. */
  #afterCr = false;
  #firstLine = true;
  #stopped = false;

  /**
   * `onRecord` gets each record as its blank line is read. A record longer
   * than `maxRecordBytes` (what an unfinished one holds in memory) makes
   * `feed` throw A2A_PROTOCOL_ERROR, before it is handed on.
   */
  constructor(onRecord: (record: SseRecord) => void, maxRecordBytes: number) {
    this.#onRecord = onRecord;
    this.#maxRecordBytes = maxRecordBytes;
  }

  /** No record is handed on after this, not even the rest of a chunk being read. */
  stop(): void {
    this.#stopped = true;
    this.#pending = [];
    this.#pendingText = undefined;
    this.#carry = undefined;
  }

  feed(chunk: Buffer): void {
    const end = chunk.length;
    let at = 0;
    if (this.#afterCr && end > 0) {
      this.#afterCr = false;
      // The LF of a CRLF cut between chunks: counted with the line it ends (or the next record, one byte either way).
      if (chunk[0] === LF) {
        at = 1;
        this.#recordBytes++;
      }
    }
    // CRs are rare (JSON escapes them; the SDKs write LF): one search finds that a chunk has none.
    let cr = chunk.indexOf(CR, at);
    while (at < end && !this.#stopped) {
      const lf = chunk.indexOf(LF, at);
      if (cr !== -1 && cr < at) cr = chunk.indexOf(CR, at);
      let lineEnd: number;
      let next: number;
      if (cr !== -1 && (lf === -1 || cr < lf)) {
        lineEnd = cr;
        next = cr + 1;
        if (next === end) this.#afterCr = true;
        else if (chunk[next] === LF) next++;
      } else if (lf !== -1) {
        lineEnd = lf;
        next = lf + 1;
      } else {
        this.#keep(at === 0 ? chunk : chunk.subarray(at));
        break;
      }
      this.#recordBytes += next - at + this.#pendingBytes;
      if (this.#pendingBytes === 0) this.#line(chunk, at, lineEnd);
      else this.#finishPendingLine(chunk.subarray(at, lineEnd));
      at = next;
    }
    if (!this.#stopped) this.#checkSize(this.#recordBytes + this.#pendingBytes);
  }

  /** Keeps a piece of the unfinished line; a long line is decoded as it comes, a piece at a time (see LONG_LINE_BYTES). */
  #keep(piece: Buffer): void {
    this.#pendingBytes += piece.length;
    if (this.#pendingText !== undefined) return this.#decodePiece(piece, false);
    this.#pending.push(piece);
    if (this.#pendingBytes < LONG_LINE_BYTES) return;
    const kept = this.#pending;
    this.#pending = [];
    this.#pendingText = "";
    for (const each of kept) this.#decodePiece(each, false);
  }

  /**
   * Adds a piece of a long line to its text. The bytes of a character the
   * piece ends in the middle of wait for the next piece (`#carry`): a cut
   * just before a lead byte is one the decoder could make itself, so the
   * text is what decoding the line whole gives, invalid bytes included.
   */
  #decodePiece(piece: Buffer, last: boolean): void {
    const bytes = this.#carry === undefined ? piece : Buffer.concat([this.#carry, piece]);
    const end = last ? bytes.length : wholeCharactersEnd(bytes);
    this.#carry = end === bytes.length ? undefined : bytes.subarray(end);
    // A rope: the pieces are joined once, when the line is read.
    this.#pendingText += bytes.toString("utf8", 0, end);
  }

  #finishPendingLine(last: Buffer): void {
    this.#pendingBytes = 0;
    if (this.#pendingText === undefined) {
      this.#pending.push(last);
      const line = Buffer.concat(this.#pending);
      this.#pending = [];
      return this.#line(line, 0, line.length);
    }
    this.#decodePiece(last, true);
    const text = this.#pendingText;
    this.#pendingText = undefined;
    this.#longLine(text);
  }

  /** `#line` for a line already decoded: a long one, whose bytes were never held whole. */
  #longLine(line: string): void {
    if (this.#firstLine) {
      this.#firstLine = false;
      if (line.charCodeAt(0) === 0xfeff) line = line.slice(1);
    }
    if (line.length === 0) return this.#dispatch();
    if (line.charCodeAt(0) === COLON) return;
    const colon = line.indexOf(":");
    const name = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.charCodeAt(0) === SPACE) value = value.slice(1);
    if (name === "data") this.#data = this.#data === undefined ? value : `${this.#data}\n${value}`;
    else if (name === "event") this.#event = value || undefined;
  }

  #checkSize(bytes: number): void {
    if (bytes > this.#maxRecordBytes) {
      this.stop();
      throw protocolError(new Error(`an SSE record of the kernel passed ${this.#maxRecordBytes} bytes`));
    }
  }

  #line(bytes: Buffer, start: number, end: number): void {
    if (this.#firstLine) {
      this.#firstLine = false;
      if (end - start >= 3 && bytes[start] === 0xef && bytes[start + 1] === 0xbb && bytes[start + 2] === 0xbf) start += 3;
    }
    if (start === end) return this.#dispatch();
    const first = bytes[start];
    if (first === COLON) return;
    // The usual line, `data:`, without decoding its name (the colon is within the line: the byte at `end` ends it).
    if (
      first === 0x64 &&
      bytes[start + 1] === 0x61 &&
      bytes[start + 2] === 0x74 &&
      bytes[start + 3] === 0x61 &&
      bytes[start + 4] === COLON
    ) {
      return this.#appendData(bytes, start + 5, end);
    }
    const colon = bytes.indexOf(COLON, start);
    const nameEnd = colon === -1 || colon >= end ? end : colon;
    const name = bytes.toString("latin1", start, nameEnd);
    if (name === "data") this.#appendData(bytes, nameEnd + 1, end);
    else if (name === "event") this.#event = valueOf(bytes, nameEnd + 1, end) || undefined;
  }

  /** The value after the colon at `start - 1` (none when `start` is past `end`). */
  #appendData(bytes: Buffer, start: number, end: number): void {
    const value = valueOf(bytes, start, end);
    this.#data = this.#data === undefined ? value : `${this.#data}\n${value}`;
  }

  #dispatch(): void {
    const bytes = this.#recordBytes;
    const data = this.#data;
    const event = this.#event;
    this.#recordBytes = 0;
    this.#data = undefined;
    this.#event = undefined;
    this.#checkSize(bytes);
    if (data !== undefined) this.#onRecord(event === undefined ? { data } : { event, data });
  }
}

/** A field's value: its bytes from `start` to `end` less one leading space, decoded. */
function valueOf(bytes: Buffer, start: number, end: number): string {
  if (start >= end) return "";
  if (bytes[start] === SPACE) start++;
  return bytes.toString("utf8", start, end);
}

/**
 * Where the whole characters of `bytes` end: before a lead byte whose
 * sequence the bytes after it do not complete (a character cut at the
 * end), else at the end.
 */
function wholeCharactersEnd(bytes: Buffer): number {
  const length = bytes.length;
  for (let at = length - 1; at >= Math.max(0, length - 3); at--) {
    const byte = bytes[at]!;
    if ((byte & 0xc0) === 0x80) continue;
    if (byte < 0xc2 || byte > 0xf4) return length;
    const needs = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : 2;
    return length - at < needs ? at : length;
  }
  return length;
}
