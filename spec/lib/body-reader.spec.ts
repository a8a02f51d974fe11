import { describe, expect, it } from "@jest/globals";
import { PassThrough, Readable } from "node:stream";
import { BYTES_PER_TURN, readRecords, type ChunkParser } from "../../lib/a2a/body-reader.js";
import { FlowGate } from "../../lib/runs/flow-gate.js";

/** A parser that keeps what it is fed, as text. */
function recordingParser(): ChunkParser & { chunks: Buffer[]; text(): string; bytes(): number; stopped: boolean } {
  return {
    chunks: [],
    stopped: false,
    feed(chunk) {
      this.chunks.push(chunk);
    },
    stop() {
      this.stopped = true;
    },
    text() {
      return Buffer.concat(this.chunks).toString("utf8");
    },
    bytes() {
      return this.chunks.reduce((sum, chunk) => sum + chunk.length, 0);
    },
  };
}

/** How the body ended: not yet (undefined), whole ("end"), or cut (the cause). */
function ending(): { onEnd: (cut?: unknown) => void; ends: unknown[] } {
  const ends: unknown[] = [];
  return { ends, onEnd: (...cut: unknown[]) => ends.push(cut.length === 0 ? "end" : cut[0]) };
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
/** Lets what happens within this turn of the loop (ticks, microtasks) happen, and no more. */
const withinTurn = async () => {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => process.nextTick(resolve));
};

describe("readRecords", () => {
  it("parses each chunk as it arrives, within the same turn, and ends once the body ends", async () => {
    const body = new PassThrough();
    const parser = recordingParser();
    const { onEnd, ends } = ending();
    readRecords(body, parser, onEnd);
    body.write("data: a\n\n");
    body.write("data: b\n\n");
    await withinTurn();
    expect(parser.text()).toBe("data: a\n\ndata: b\n\n");
    body.end("data: c\n\n");
    await nextTurn();
    expect(parser.text()).toBe("data: a\n\ndata: b\n\ndata: c\n\n");
    expect(ends).toEqual(["end"]);
  });

  it("ends after the chunks that came before a cut, and hands the cause over", async () => {
    const body = new PassThrough();
    const parser = recordingParser();
    const { onEnd, ends } = ending();
    readRecords(body, parser, onEnd);
    body.write("data: first\n\n");
    await nextTurn();
    const cause = new Error("Premature close");
    body.destroy(cause);
    await nextTurn();
    expect(parser.text()).toBe("data: first\n\n");
    expect(ends).toEqual([cause]);
  });

  it("ends after the chunks that wait for their turn when the body is cut meanwhile", async () => {
    const body = new Readable({ read() {} });
    const parser = recordingParser();
    const { onEnd, ends } = ending();
    readRecords(body, parser, onEnd);
    await withinTurn();
    const sent = Buffer.alloc(BYTES_PER_TURN + 1000, "x");
    body.push(sent);
    const cause = new Error("cut");
    body.destroy(cause);
    await withinTurn();
    expect(parser.bytes()).toBe(BYTES_PER_TURN);
    expect(ends).toEqual([]);
    await nextTurn();
    expect(parser.bytes()).toBe(sent.length);
    expect(ends).toEqual([cause]);
  });

  it("pauses the body while more than 1 MiB waits unparsed, and resumes it once parsing brings that under", async () => {
    const body = new Readable({ read() {} });
    const parser = recordingParser();
    readRecords(body, parser, () => {});
    await withinTurn();
    const chunk = Buffer.alloc(256 * 1024, "x");
    for (let i = 0; i < 6; i++) body.push(chunk);
    await withinTurn();
    // One chunk is the turn's share; five wait.
    expect(parser.bytes()).toBe(BYTES_PER_TURN);
    expect(body.isPaused()).toBe(true);
    await nextTurn();
    expect(parser.bytes()).toBe(2 * BYTES_PER_TURN);
    expect(body.isPaused()).toBe(false);
  });

  it("parses at most BYTES_PER_TURN in one turn of the event loop; the rest waits for the next turn", async () => {
    const body = new Readable({ read() {} });
    const parser = recordingParser();
    const { onEnd, ends } = ending();
    readRecords(body, parser, onEnd);
    await withinTurn();
    const sent = Buffer.from(Array.from({ length: BYTES_PER_TURN * 2 + 100 }, (_, i) => i % 251));
    // Chunks as a socket gives them: six fit in a turn, the seventh is cut to what is left.
    for (let at = 0; at < sent.length; at += 40 * 1024) body.push(sent.subarray(at, at + 40 * 1024));
    body.push(null);
    await withinTurn();
    expect(parser.chunks.map((chunk) => chunk.length)).toEqual([...Array(6).fill(40 * 1024), BYTES_PER_TURN - 6 * 40 * 1024]);
    await nextTurn();
    expect(parser.bytes()).toBe(2 * BYTES_PER_TURN);
    expect(ends).toEqual([]);
    await nextTurn();
    expect(Buffer.concat(parser.chunks).equals(sent)).toBe(true);
    expect(ends).toEqual(["end"]);
  });

  it("ends when the body is destroyed without an error, as a cut", async () => {
    const body = new PassThrough();
    const { onEnd, ends } = ending();
    readRecords(body, recordingParser(), onEnd);
    body.destroy();
    await nextTurn();
    expect(ends).toHaveLength(1);
    expect(ends[0]).toBeInstanceOf(Error);
  });

  it("takes an error after the end for nothing: the body was whole", async () => {
    const body = new PassThrough();
    const parser = recordingParser();
    const { onEnd, ends } = ending();
    readRecords(body, parser, onEnd);
    body.end("data: a\n\n");
    await nextTurn();
    expect(parser.text()).toBe("data: a\n\n");
    body.destroy(new Error("late"));
    await nextTurn();
    expect(ends).toEqual(["end"]);
  });

  it("stops the parser and the body when cancelled, and tells no end", async () => {
    const body = new PassThrough();
    const parser = recordingParser();
    const { onEnd, ends } = ending();
    const reading = readRecords(body, parser, onEnd);
    reading.cancel();
    expect(body.destroyed).toBe(true);
    expect(parser.stopped).toBe(true);
    await nextTurn();
    expect(ends).toEqual([]);
  });

  it("destroys the body and ends with the parser's error when the parser refuses a chunk", async () => {
    const body = new PassThrough();
    const refusal = new Error("too large");
    const parsed: string[] = [];
    const { onEnd, ends } = ending();
    readRecords(
      body,
      {
        feed: (chunk) => {
          if (chunk.toString() === "bad") throw refusal;
          parsed.push(chunk.toString());
        },
        stop: () => {},
      },
      onEnd,
    );
    body.write("good");
    await withinTurn();
    body.write("bad");
    body.write("after");
    await nextTurn();
    expect(parsed).toEqual(["good"]);
    expect(ends).toEqual([refusal]);
    expect(body.destroyed).toBe(true);
  });

  it("with the gate closed, holds a chunk and pauses the body at once; the open gate has it parsed and the body flow", async () => {
    const body = new PassThrough();
    const gate = new FlowGate();
    const parser = recordingParser();
    readRecords(body, parser, () => {}, gate);
    gate.pause();
    body.write("data: a\n\n");
    await nextTurn();
    expect(parser.chunks).toEqual([]);
    expect(body.isPaused()).toBe(true);
    body.write("data: b\n\n");
    await nextTurn();
    expect(parser.chunks).toEqual([]);

    gate.resume();
    await nextTurn();
    expect(parser.text()).toBe("data: a\n\ndata: b\n\n");
    expect(body.isPaused()).toBe(false);
  });

  it("with the gate closed, takes the rest of the socket read before pausing, so that a cut right after loses none of it", async () => {
    const body = new Readable({ read() {} });
    const gate = new FlowGate();
    const parser = recordingParser();
    const { onEnd, ends } = ending();
    readRecords(body, parser, onEnd, gate);
    await withinTurn();
    gate.pause();
    // One socket read's chunks, as the HTTP parser pushes them: all in the same callback.
    for (const record of ["data: 1\n\n", "data: 2\n\n", "data: 3\n\n"]) body.push(record);
    await withinTurn();
    expect(body.isPaused()).toBe(true);
    const cause = new Error("aborted");
    body.destroy(cause);
    await nextTurn();
    expect(parser.chunks).toEqual([]);
    gate.resume();
    await nextTurn();
    expect(parser.text()).toBe("data: 1\n\ndata: 2\n\ndata: 3\n\n");
    expect(ends).toEqual([cause]);
  });

  it("with the gate open, reads as without one", async () => {
    const body = new PassThrough();
    const parser = recordingParser();
    readRecords(body, parser, () => {}, new FlowGate());
    body.write("data: a\n\n");
    await withinTurn();
    expect(body.isPaused()).toBe(false);
    expect(parser.text()).toBe("data: a\n\n");
  });

  it("parses nothing more once cancelled while chunks wait at the closed gate", async () => {
    const body = new PassThrough();
    const gate = new FlowGate();
    const parser = recordingParser();
    const { onEnd, ends } = ending();
    const reading = readRecords(body, parser, onEnd, gate);
    gate.pause();
    body.write("data: a\n\n");
    await nextTurn();
    reading.cancel();
    gate.resume();
    await nextTurn();
    expect(parser.chunks).toEqual([]);
    expect(body.destroyed).toBe(true);
    expect(ends).toEqual([]);
  });
});
