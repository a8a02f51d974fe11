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
 * whole stream would.
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

export class SseRecordParser {
  readonly #onRecord: (record: SseRecord) => void;
  readonly #maxRecordBytes: number;
  /** The unfinished line, as the chunks before this one held it. */
  #pending: Buffer[] = [];
  #pendingBytes = 0;
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
        this.#pending.push(at === 0 ? chunk : chunk.subarray(at));
        this.#pendingBytes += end - at;
        break;
      }
      this.#recordBytes += next - at + this.#pendingBytes;
      if (this.#pendingBytes === 0) this.#line(chunk, at, lineEnd);
      else {
        this.#pending.push(chunk.subarray(at, lineEnd));
        const line = Buffer.concat(this.#pending);
        this.#pending = [];
        this.#pendingBytes = 0;
        this.#line(line, 0, line.length);
      }
      at = next;
    }
    if (!this.#stopped) this.#checkSize(this.#recordBytes + this.#pendingBytes);
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
