/**
 * The kernel's SSE body as eventsource-client reads it: see `readBody`.
 */
import type { Readable } from "node:stream";

/** The slice of a web `ReadableStream` that eventsource-client reads: `getReader().read()` in a loop. */
export interface BodyReader {
  read(): Promise<{ done: false; value: Uint8Array } | { done: true; value: undefined }>;
  releaseLock(): void;
  cancel(): Promise<void>;
}

/**
 * Past this many bytes received and not yet read, the kernel's socket is
 * paused (TCP then slows the kernel); reading resumes it. eventsource-client
 * reads again as soon as it has parsed a chunk, so only a burst larger than
 * this ever waits.
 */
const PAUSE_AFTER_BYTES = 1024 * 1024;

/**
 * node-fetch's body, handed to eventsource-client as the web stream it
 * reads, without node's `Readable.toWeb(Readable.from(...))` adapter (two
 * more streams per connection, and a read per chunk rather than per burst).
 *
 * A read error is not passed on as a failed read: eventsource-client would
 * take an AbortError (what node's adapter made of node-fetch's "Premature
 * close") for its own close() and hang, and any other error for a reason
 * to reconnect, and the cause would be lost either way. So the body ends
 * instead, after every chunk before the cut, and the cause is handed to
 * `onCut`.
 *
 * Chunks are taken as they arrive (flowing mode), not pulled: node-fetch
 * destroys the body when the connection dies, and destroying discards what
 * was received but not yet read — the records that arrived with the cut,
 * often the very first ones, which name the task a cancel needs. (Only while
 * more than 1 MiB waits unread is the body paused, and a cut then loses what
 * node-fetch still buffers.) Whatever has arrived when eventsource-client
 * reads is handed over as one chunk. A body closed without an end or an
 * error (destroyed) ends the same way as a cut.
 */
export function readBody(body: Readable, onCut: (error: unknown) => void): { getReader(): BodyReader } {
  const arrived: Buffer[] = [];
  let arrivedBytes = 0;
  let ended = false;
  let waiting: ((result: Awaited<ReturnType<BodyReader["read"]>>) => void) | undefined;

  const handOver = () => {
    if (!waiting || (arrived.length === 0 && !ended)) return;
    const deliver = waiting;
    waiting = undefined;
    if (arrived.length === 0) return deliver({ done: true, value: undefined });
    const value = arrived.length === 1 ? arrived[0]! : Buffer.concat(arrived, arrivedBytes);
    arrived.length = 0;
    arrivedBytes = 0;
    if (body.isPaused()) body.resume();
    deliver({ done: false, value });
  };

  body.on("data", (chunk: Buffer) => {
    arrived.push(chunk);
    arrivedBytes += chunk.length;
    if (arrivedBytes > PAUSE_AFTER_BYTES) body.pause();
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
        waiting = resolve;
        handOver();
      }),
    releaseLock: () => {},
    cancel: async () => {
      body.destroy();
      ended = true;
      handOver();
    },
  };
  return { getReader: () => reader };
}
