/**
 * The SSE parser's record limit: where an SSE record ends, whatever line
 * ends the kernel writes and however its body is cut into chunks. A record under the limit
 * is never refused (a miscounted end would add records up and refuse a
 * healthy stream), and one over it always is.
 */
import { PassThrough } from "node:stream";
import { describe, expect, it } from "@jest/globals";
import fc from "fast-check";
import { readRecords } from "../../lib/a2a/body-reader.js";
import { SseRecordParser } from "../../lib/a2a/sse-parser.js";

const LINE_ENDS = ["\n", "\r", "\r\n"] as const;

/** Body chunks are at most this long here, and every record longer (as a socket read is at most 64 KiB, and the limit no less). */
const CHUNK = 64;

/** One record: `data:` lines of the given lengths, each ended by its line end, then a blank line. */
const recordArbitrary = fc.record({
  lines: fc
    .tuple(fc.integer({ min: CHUNK, max: 300 }), fc.array(fc.integer({ min: 0, max: 300 }), { maxLength: 3 }))
    .map(([first, rest]) => [first, ...rest]),
  ends: fc.array(fc.constantFrom(...LINE_ENDS), { minLength: 4, maxLength: 4 }),
});

/** The blank line repeats the last line end: a CR followed by an LF would be one CRLF, not two line ends. */
function recordText({ lines, ends }: { lines: number[]; ends: string[] }): string {
  const body = lines.map((length, index) => `data: ${"x".repeat(length)}${ends[index]}`).join("");
  return body + ends[lines.length - 1];
}

/** Feeds `text` in pieces of the given sizes, in turn; returns the refusal, if any. */
function feed(text: string, sizes: number[], maxBytes: number): unknown {
  const parser = new SseRecordParser(() => {}, maxBytes);
  const bytes = Buffer.from(text);
  try {
    for (let from = 0, piece = 0; from < bytes.length; piece++) {
      const size = sizes[piece % sizes.length]!;
      parser.feed(bytes.subarray(from, from + size));
      from += size;
    }
  } catch (error) {
    return error;
  }
  return undefined;
}

const recordsArbitrary = fc.array(recordArbitrary, { minLength: 1, maxLength: 12 });
const chunkSizes = fc.array(fc.integer({ min: 1, max: CHUNK }), { minLength: 1, maxLength: 20 });

describe("the SSE record limit", () => {
  it("never refuses records within the limit, and refuses one past it, whatever the line ends and chunks", () => {
    fc.assert(
      fc.property(recordsArbitrary, chunkSizes, (records, sizes) => {
        const texts = records.map(recordText);
        const largest = Math.max(...texts.map((text) => Buffer.byteLength(text)));
        const stream = texts.join("");
        // A CRLF ending a record may be counted with the next one: one byte either way.
        expect(feed(stream, sizes, largest + 1)).toBeUndefined();
        expect(feed(stream, sizes, largest - 2)).toEqual(expect.objectContaining({ code: "A2A_PROTOCOL_ERROR" }));
      }),
      { numRuns: 500 },
    );
  });

  it("destroys the body once a record passes the limit, after the records before it", async () => {
    const body = new PassThrough();
    const records: string[] = [];
    let refusal: unknown;
    readRecords(body, new SseRecordParser((record) => records.push(record.data), 10), (cut) => (refusal = cut));
    body.write("data: 1\n\nda");
    await new Promise((resolve) => setImmediate(resolve));
    expect(refusal).toBeUndefined();
    body.write("ta: 12345");
    await new Promise((resolve) => setImmediate(resolve));
    expect(records).toEqual(["1"]);
    expect(refusal).toEqual(expect.objectContaining({ code: "A2A_PROTOCOL_ERROR" }));
    expect(body.destroyed).toBe(true);
  });
});
