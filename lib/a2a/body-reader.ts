/**
 * The kernel's SSE body as the stream's parser reads it (`sse-stream.ts`): see `readBody`.
 */
import type { Readable } from "node:stream";
import { protocolError } from "./rpc-errors.js";

/** What `postSse` reads the body through: `getReader().read()` in a loop, the shape of a web stream's reader. */
export interface BodyReader {
  read(): Promise<{ done: false; value: Uint8Array } | { done: true; value: undefined }>;
  releaseLock(): void;
  cancel(): Promise<void>;
}

/**
 * Whether the stream's reader may read on (see `http/flow-gate.ts`): the
 * run's client is behind while it is closed. `whenOpen()` is `undefined`
 * while open, else a promise that settles when it opens.
 */
export interface ReadGate {
  whenOpen(): Promise<void> | undefined;
}

/**
 * Past this many bytes received and not yet read, the kernel's socket is
 * paused (TCP then slows the kernel); reading resumes it. The parser
 * reads again as soon as it has parsed a chunk, so only a burst larger than
 * this ever waits.
 */
const PAUSE_AFTER_BYTES = 1024 * 1024;

/**
 * At most this many bytes of the kernel's stream go to the parser
 * in one turn of the event loop; a read past them waits for the next turn.
 * Every record handed over runs through the whole run (parse, projection,
 * SSE encoding) before anything else can, and a socket that keeps up is
 * read up to 32 times in one turn (libuv reads on while data is there):
 * an answer of 16 KiB deltas read at full speed went through 2 MiB a turn,
 * holding every other stream of the process for 60–200 ms
 * (`npm run bench -- memory`). 256 KiB is a few milliseconds of work.
 */
export const BYTES_PER_TURN = 256 * 1024;

/**
 * The kernel's response body, read by `postSse` a burst at a time (a read
 * takes whatever has arrived, rather than one chunk).
 *
 * A read error is not passed on as a failed read: the body ends instead,
 * after every chunk before the cut, and the cause is handed to `onCut`
 * (the stream then fails with it after the records that arrived).
 *
 * Chunks are taken as they arrive (flowing mode), not pulled: the response
 * is destroyed when the connection dies, and destroying discards what
 * was received but not yet read — the records that arrived with the cut,
 * often the very first ones, which name the task a cancel needs. (Only while
 * more than 1 MiB waits unread is the body paused, and a cut then loses what
 * the response still buffers.) Whatever has arrived when the parser
 * reads is handed over as one chunk, up to what is left of BYTES_PER_TURN
 * (a read once they are spent waits for the next turn). A body closed
 * without an end or an error (destroyed) ends the same way as a cut.
 *
 * With a `gate`, a read waits while the gate is closed, and a chunk that
 * arrives meanwhile pauses the body at once: the parser gets nothing
 * more, the response stops reading the socket, and TCP holds the
 * kernel back until the run's client has caught up. What the run holds of
 * the kernel's stream meanwhile is that chunk and the response's buffers
 * (a cut then loses what they hold, as above).
 */
export function readBody(body: Readable, onCut: (error: unknown) => void, gate?: ReadGate): { getReader(): BodyReader } {
  const arrived: Buffer[] = [];
  let arrivedBytes = 0;
  let ended = false;
  let waiting: ((result: Awaited<ReturnType<BodyReader["read"]>>) => void) | undefined;
  // A read that waits for the gate to open.
  let waitingAtGate: typeof waiting;
  let cancelled = false;
  // Bytes handed over in this turn of the event loop, and a read waiting for the next.
  let turnBytes = 0;
  let turnScheduled = false;
  let waitingForTurn: (() => void) | undefined;
  const nextTurn = () => {
    turnScheduled = false;
    turnBytes = 0;
    const proceed = waitingForTurn;
    waitingForTurn = undefined;
    proceed?.();
  };

  /** The chunks that arrived first, `limit` bytes of them or the first alone (cut to `limit`). */
  const take = (limit: number): Buffer => {
    let count = 0;
    let bytes = 0;
    while (count < arrived.length && bytes + arrived[count]!.length <= limit) bytes += arrived[count++]!.length;
    let value: Buffer;
    if (count === 0) {
      const first = arrived[0]!;
      value = first.subarray(0, limit);
      arrived[0] = first.subarray(limit);
    } else value = count === 1 ? arrived.shift()! : Buffer.concat(arrived.splice(0, count), bytes);
    arrivedBytes -= value.length;
    return value;
  };

  const handOver = () => {
    if (!waiting || (arrived.length === 0 && !ended)) return;
    const deliver = waiting;
    waiting = undefined;
    if (arrived.length === 0) return deliver({ done: true, value: undefined });
    // A cancelled body's reads are not held to the turn (see `read`).
    const value = take(cancelled ? Infinity : BYTES_PER_TURN - turnBytes);
    turnBytes += value.length;
    if (!turnScheduled) {
      turnScheduled = true;
      setImmediate(nextTurn);
    }
    if (body.isPaused() && arrivedBytes <= PAUSE_AFTER_BYTES && gate?.whenOpen() === undefined) body.resume();
    deliver({ done: false, value });
  };
  // Asked for more with the gate open: a body the closed gate paused flows again.
  const takeNext = (resolve: NonNullable<typeof waiting>) => {
    waiting = resolve;
    if (body.isPaused() && arrivedBytes <= PAUSE_AFTER_BYTES) body.resume();
    handOver();
  };

  body.on("data", (chunk: Buffer) => {
    arrived.push(chunk);
    arrivedBytes += chunk.length;
    if (arrivedBytes > PAUSE_AFTER_BYTES || (!waiting && gate?.whenOpen() !== undefined)) body.pause();
    handOver();
  });
  body.once("end", () => {
    ended = true;
    handOver();
  });
  const cut = (error: unknown) => {
    if (ended) return;
    onCut(error);
    ended = true;
    handOver();
  };
  body.once("error", cut);
  body.once("close", () => {
    if (!body.readableEnded) cut(new Error("the body closed before its end"));
  });

  const reader: BodyReader = {
    read: () =>
      new Promise((resolve) => {
        const throughGate = () => {
          const opened = cancelled ? undefined : gate?.whenOpen();
          if (opened === undefined) return takeNext(resolve);
          waitingAtGate = resolve;
          void opened.then(() => {
            if (waitingAtGate !== resolve) return;
            waitingAtGate = undefined;
            takeNext(resolve);
          });
        };
        if (turnBytes < BYTES_PER_TURN || cancelled) return throughGate();
        waitingForTurn = () => (cancelled ? resolve({ done: true, value: undefined }) : throughGate());
      }),
    releaseLock: () => {},
    cancel: async () => {
      cancelled = true;
      body.destroy();
      ended = true;
      waitingAtGate?.({ done: true, value: undefined });
      waitingAtGate = undefined;
      const proceed = waitingForTurn;
      waitingForTurn = undefined;
      proceed?.();
      handOver();
    },
  };
  return { getReader: () => reader };
}

/**
 * Bounds one SSE record of `body` to `maxBytes`: the SSE parser keeps
 * an unfinished record in memory however long it grows, so once more than
 * `maxBytes` of one record have arrived, `onTooLarge` gets an
 * A2A_PROTOCOL_ERROR and the body is destroyed (which `readBody` then ends
 * as a cut). Only records that span chunks are measured: one that starts
 * and ends within a chunk is smaller than the chunk (at most 64 KiB, what a
 * socket read yields), and the limit is no less than that.
 *
 * A record ends at a blank line, two line ends in a row: every such pair,
 * whatever mix of CR, LF and CRLF, holds `\n\n`, `\n\r` or `\r\r`, or has
 * them across two chunks.
 */
export function limitRecordBytes(body: Readable, maxBytes: number, onTooLarge: (error: unknown) => void): void {
  // Bytes of the record still open at the end of the last chunk, and that chunk's last byte.
  let open = 0;
  let previous = -1;
  body.on("data", (chunk: Buffer) => {
    if (chunk.length === 0) return;
    const first = recordEnd(chunk, previous, "first");
    // The record that was open, with what of it this chunk holds (all of it, when it ends here).
    const held = open + (first < 0 ? chunk.length : first);
    open = first < 0 ? held : chunk.length - recordEnd(chunk, previous, "last");
    previous = chunk[chunk.length - 1]!;
    if (held <= maxBytes && open <= maxBytes) return;
    onTooLarge(protocolError(new Error(`an SSE record of the kernel passed ${maxBytes} bytes`)));
    body.destroy();
  });
}

const LF = 0x0a;
const CR = 0x0d;
const BLANK_LF = Buffer.from("\n\n");
const CR_PAIRS = [Buffer.from("\n\r"), Buffer.from("\r\r")];

/**
 * Where the first or last record ending in `chunk` ends (the index after
 * its blank line; a CRLF's LF may fall just after), or -1. `previous` is
 * the byte before the chunk.
 */
function recordEnd(chunk: Buffer, previous: number, which: "first" | "last"): number {
  const find = (pair: Buffer) => (which === "first" ? chunk.indexOf(pair) : chunk.lastIndexOf(pair));
  const better = (a: number, b: number) => (a < 0 ? b : b < 0 ? a : which === "first" ? Math.min(a, b) : Math.max(a, b));
  const lf = find(BLANK_LF);
  let end = lf < 0 ? -1 : lf + 2;
  // CRs are rare (the SDK writes LF only): the other pairs are looked for only when a CR could hold a better one.
  const cr = which === "first" ? chunk.indexOf(CR) : chunk.indexOf(CR, Math.max(end, 0));
  if (cr >= 0 && (which === "last" || end < 0 || cr < end)) {
    for (const pair of CR_PAIRS) {
      const at = find(pair);
      if (at >= 0) end = better(end, at + 2);
    }
  }
  const head = chunk[0]!;
  const acrossEdge = (previous === LF && (head === LF || head === CR)) || (previous === CR && head === CR);
  return acrossEdge && (which === "first" || end < 0) ? 1 : end;
}
