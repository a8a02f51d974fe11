/**
 * The kernel's SSE records as `SseRecordParser` reads them from bytes are
 * the records a streaming TextDecoder and `eventsource-parser` (the
 * well-kept parser the service read them with before) make of the same
 * bytes: whatever the fields, comments, line ends, characters (invalid
 * UTF-8 too) and however the body is cut into chunks.
 */
import { describe, expect, it } from "@jest/globals";
import { createParser } from "eventsource-parser";
import fc from "fast-check";
import { SseRecordParser, type SseRecord } from "../../lib/a2a/sse-parser.js";

const LINE_ENDS = ["\n", "\r", "\r\n"];

/** A field value's bytes: text of any characters, or raw bytes (not always UTF-8), never a line end. */
const valueBytes = fc.oneof(
  fc.string({ unit: "grapheme", maxLength: 12 }).map((text) => Buffer.from(text.replace(/[\r\n]/g, ""))),
  fc.uint8Array({ maxLength: 12 }).map((bytes) => Buffer.from(bytes.filter((byte) => byte !== 0x0a && byte !== 0x0d))),
  fc.constant(Buffer.from('{"jsonrpc":"2.0","result":{"text":"é ✓ 𝄞"}}')),
);

/** One line of a stream: a field as the standard spells them, or a comment, a blank line, an unknown field. */
const lineBytes = fc.oneof(
  { weight: 4, arbitrary: fc.tuple(fc.constantFrom("data:", "data: ", "data:  "), valueBytes) },
  { weight: 2, arbitrary: fc.tuple(fc.constantFrom("event:", "event: ", "id: ", "retry: ", "retry:12", ":", ": ", "foo:"), valueBytes) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom("data", "event", "", "dat", "data ", " data:"), fc.constant(Buffer.alloc(0))) },
  { weight: 3, arbitrary: fc.constant(["", Buffer.alloc(0)] as [string, Buffer]) },
);

const streamBytes = fc
  .tuple(fc.boolean(), fc.array(fc.tuple(lineBytes, fc.constantFrom(...LINE_ENDS)), { maxLength: 30 }))
  .map(([bom, lines]) =>
    Buffer.concat([
      Buffer.from(bom ? "\uFEFF" : ""),
      ...lines.map(([[name, value], end]) => Buffer.concat([Buffer.from(name), value, Buffer.from(end)])),
    ]),
  );

/** The bytes cut at the given sizes, in turn. */
function chunksOf(bytes: Buffer, sizes: number[]): Buffer[] {
  const chunks: Buffer[] = [];
  for (let from = 0, piece = 0; from < bytes.length; piece++) {
    const size = sizes[piece % sizes.length]!;
    chunks.push(bytes.subarray(from, from + size));
    from += size;
  }
  return chunks;
}

function referenceRecords(chunks: Buffer[]): SseRecord[] {
  const records: SseRecord[] = [];
  const parser = createParser({
    onEvent: ({ event, data }) => records.push(event === undefined ? { data } : { event, data }),
  });
  const decoder = new TextDecoder();
  for (const chunk of chunks) parser.feed(decoder.decode(chunk, { stream: true }));
  return records;
}

function parsedRecords(chunks: Buffer[]): SseRecord[] {
  const records: SseRecord[] = [];
  const parser = new SseRecordParser((record) => records.push(record), 1024 * 1024);
  for (const chunk of chunks) parser.feed(chunk);
  return records;
}

describe("SseRecordParser", () => {
  it("reads the records a TextDecoder and eventsource-parser read, however the bytes are cut", () => {
    fc.assert(
      fc.property(streamBytes, fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 10 }), (bytes, sizes) => {
        const chunks = chunksOf(bytes, sizes);
        // eventsource-parser holds a CR that ends a chunk until it sees whether an LF follows; at the body's end
        // none ever does, and it forgets the line the CR ended. An LF there makes it a CRLF, the same line end.
        const endsInCr = bytes.length > 0 && bytes[bytes.length - 1] === 0x0d;
        expect(parsedRecords(chunks)).toEqual(referenceRecords(endsInCr ? [...chunks, Buffer.from("\n")] : chunks));
      }),
      { numRuns: 2000 },
    );
  });

  it("reads long lines (decoded piece by piece as they come) as the reference does, whatever the characters and cuts", () => {
    /** `length` bytes of text, multi-byte characters and invalid UTF-8, never a line end, from a seed. */
    const longValue = (length: number, seed: number) => {
      const pieces = [
        Buffer.from('abc {}[]"\\ '),
        Buffer.from("é"),
        Buffer.from("𝄞"),
        Buffer.from([0xff]),
        Buffer.from([0xc3]),
        Buffer.from([0xf0, 0x9d]),
      ];
      const out: Buffer[] = [];
      let state = seed >>> 0 || 1;
      for (let bytes = 0; bytes < length;) {
        state = (state * 1103515245 + 12345) >>> 0;
        const piece = pieces[state % pieces.length]!;
        out.push(piece);
        bytes += piece.length;
      }
      return Buffer.concat(out);
    };
    fc.assert(
      fc.property(
        fc.integer({ min: 60 * 1024, max: 200 * 1024 }),
        fc.integer(),
        fc.boolean(),
        fc.constantFrom("data:", "data: ", "event: ", ": ", "foo: ", "data"),
        fc.array(fc.integer({ min: 1, max: 70_000 }), { minLength: 1, maxLength: 5 }),
        (length, seed, bom, field, sizes) => {
          const bytes = Buffer.concat([
            Buffer.from(bom ? "\uFEFF" : ""),
            Buffer.from(field),
            longValue(length, seed),
            Buffer.from("\ndata: after\n\n"),
          ]);
          const chunks = chunksOf(bytes, sizes);
          expect(parsedRecords(chunks)).toEqual(referenceRecords(chunks));
        },
      ),
      { numRuns: 60 },
    );
  });

  it("reads the usual stream, one `data:` line a record, with its event names", () => {
    const stream = Buffer.from('data: {"a":1}\n\nevent: error\ndata: {"b":"é"}\n\n: keep-alive\n\ndata: line 1\ndata: line 2\r\n\r\n');
    expect(parsedRecords([stream])).toEqual([{ data: '{"a":1}' }, { event: "error", data: '{"b":"é"}' }, { data: "line 1\nline 2" }]);
  });

  it("hands on nothing of a chunk after it is stopped, not even the records left in that chunk", () => {
    const records: string[] = [];
    const parser: SseRecordParser = new SseRecordParser((record) => {
      records.push(record.data);
      parser.stop();
    }, 1024);
    parser.feed(Buffer.from("data: 1\n\ndata: 2\n\n"));
    parser.feed(Buffer.from("data: 3\n\n"));
    expect(records).toEqual(["1"]);
  });

  it("drops an unfinished last record", () => {
    expect(parsedRecords([Buffer.from("data: 1\n\ndata: 2\n")])).toEqual([{ data: "1" }]);
  });
});
