/**
 * How a fixture `drop` line cuts a stream: the SSE response of the
 * `SendStreamingMessage` call that started the turn ends abruptly (the
 * socket closes with no end of the chunked body, as when a kernel or a
 * proxy goes away), while the replay goes on publishing the rest of its
 * lines to the task. A `SubscribeToTask` and the pipeline recovery route
 * then see what the cut stream missed, which is what an adapter's
 * "stream dropped → re-attach" path needs to be tested against.
 *
 * The cut must come after the frames published before the drop line have
 * reached the wire, not merely the event bus: the SDK writes each event
 * with one `res.write` some ticks after it is published. So each streaming
 * response counts the SSE records written to it, and the replay waits until
 * that count reaches the number of events it published for the call.
 *
 * Responses are keyed by the request's header object, the one identity the
 * SDK's call context (`state.headers`) and the Express request share (as in
 * `fixture-errors.ts`).
 */
import { STATE_HEADERS_KEY, type ServerCallContext } from "@a2a-js/sdk/server";
import type { RequestHandler, Response } from "express";

interface TrackedStream {
  res: Response;
  /** SSE data records written so far. */
  written: number;
  cut: boolean;
  /** Called after every write and when the response ends. */
  onProgress: Set<() => void>;
}

export class StreamDrops {
  private readonly streams = new WeakMap<object, TrackedStream>();

  /**
   * Express middleware for the JSON-RPC route: follows the writes of every
   * streaming call's response (`message/stream` in the A2A 0.3 kernel).
   */
  track(streamingMethod = "SendStreamingMessage"): RequestHandler {
    return (req, res, next) => {
      if (req.body?.method !== streamingMethod) return next();
      const stream: TrackedStream = { res, written: 0, cut: false, onProgress: new Set() };
      this.streams.set(req.headers, stream);
      const notify = () => stream.onProgress.forEach((listener) => listener());
      const write = res.write.bind(res) as (chunk: unknown, ...rest: unknown[]) => boolean;
      res.write = ((chunk: unknown, ...rest: unknown[]) => {
        // The SDK goes on writing the task's events to a cut response; they go nowhere.
        if (stream.cut) return true;
        const written = write(chunk, ...rest);
        if (typeof chunk === "string" && chunk.startsWith("data:")) {
          stream.written++;
          notify();
        }
        return written;
      }) as typeof res.write;
      // Nor may the SDK end it properly afterwards: that would write the body's end after all.
      const end = res.end.bind(res) as (...args: unknown[]) => Response;
      res.end = ((...args: unknown[]) => (stream.cut ? res : end(...args))) as typeof res.end;
      res.once("close", notify);
      next();
    };
  }

  /**
   * Cuts the streaming response of `call` once `published` SSE records have
   * been written to it. Resolves at once for a call that is not a stream
   * (a sideband `SendMessage`), a response that already ended (the stream
   * stopped at a terminal state before the drop line), or when `signal`
   * aborts.
   */
  async cut(call: ServerCallContext, published: number, signal: AbortSignal): Promise<void> {
    return this.cutRequest(call.state.get(STATE_HEADERS_KEY), published, signal);
  }

  /**
   * `cut` for a call known by its Express request's header object (an SDK
   * whose call context does not carry it, as 0.3's does not).
   */
  async cutRequest(headers: unknown, published: number, signal: AbortSignal): Promise<void> {
    const stream = typeof headers === "object" && headers !== null ? this.streams.get(headers) : undefined;
    if (!stream) return;
    const ended = () => stream.res.writableEnded || stream.res.destroyed;
    await new Promise<void>((resolve) => {
      const check = () => {
        if (stream.written < published && !ended() && !signal.aborted) return;
        stream.onProgress.delete(check);
        signal.removeEventListener("abort", check);
        resolve();
      };
      stream.onProgress.add(check);
      signal.addEventListener("abort", check);
      check();
    });
    if (ended() || signal.aborted) return;
    stream.cut = true;
    // Flush what was written, then close without ending the chunked body:
    // the client reads every frame before the drop, then a broken stream.
    const socket = stream.res.socket;
    if (socket) socket.end(() => socket.destroy());
    else stream.res.destroy();
  }
}
