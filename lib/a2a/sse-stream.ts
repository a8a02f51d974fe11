/**
 * One POST whose answer is an SSE stream, as an Observable of its records.
 *
 * Read with `node:http` (`kernelStream`) and `eventsource-parser`, nothing
 * between them but the body reader: a JSON-RPC stream is one POST that
 * ends when its body ends, so a browser-style EventSource (reconnects,
 * retries, a fetch and web streams over the socket) only had to be
 * disarmed, and cost a `stream.pipeline`, a PassThrough and their
 * listeners per stream besides.
 *
 *   POST → 200 text/event-stream, records a b, body ends   --a--b--|
 *   POST → JSON (any status), or fails, or times out        --#  (AguiError)
 *   body cut by the transport (chunked body without end)   --a--#  (A2A_UNAVAILABLE)
 *   a record grows past maxRecordBytes                     --a--#  (A2A_PROTOCOL_ERROR)
 *   unsubscribe                                            the request is destroyed
 */
import type { IncomingMessage } from "node:http";
import { Observable } from "rxjs";
import { createParser, type EventSourceMessage } from "eventsource-parser";
import { AguiError } from "../errors.js";
import { limitRecordBytes, readBody, type BodyReader, type ReadGate } from "./body-reader.js";
import { kernelStream } from "./kernel-fetch.js";
import { unavailable } from "./rpc-errors.js";

/** One record of the stream: its `event:` field, if any, and its data lines joined. */
export type SseRecord = EventSourceMessage;

export interface SsePost {
  url: string;
  headers: Record<string, string>;
  body: string;
  /** Until the response headers (or a JSON error body) have arrived. */
  connectTimeoutMs: number;
  /** One SSE record, in bytes; a longer one fails the stream with A2A_PROTOCOL_ERROR (see limitRecordBytes). */
  maxRecordBytes: number;
  /** A JSON answer instead of the stream, in bytes (see kernelStream). */
  maxResponseBytes: number;
  /** While closed, the body is not read on (see `readBody`). */
  gate?: ReadGate;
}

/** Records of the stream in order; completes when the server ends the body. Each subscription is one POST. */
export function postSse({ url, headers, body, connectTimeoutMs, maxRecordBytes, maxResponseBytes, gate }: SsePost): Observable<SseRecord> {
  return new Observable<SseRecord>((subscriber) => {
    const fail = (error: unknown) => subscriber.error(error instanceof AguiError ? error : unavailable(error));
    let reader: BodyReader | undefined;

    const read = async (response: IncomingMessage) => {
      // Why the body ended early, if the transport cut it (see readBody) or a record grew too large; the first cause is kept.
      let cut: unknown;
      limitRecordBytes(response, maxRecordBytes, (error) => (cut ??= error));
      reader = readBody(response, (error) => (cut ??= error), gate).getReader();
      const parser = createParser({ onEvent: (record) => subscriber.next(record) });
      const decoder = new TextDecoder();
      for (;;) {
        const { done, value } = await reader.read();
        if (subscriber.closed) return;
        // An unfinished last record is dropped, as an EventSource drops it.
        if (done) return cut === undefined ? subscriber.complete() : fail(cut);
        parser.feed(decoder.decode(value, { stream: true }));
      }
    };

    const sent = kernelStream(url, { headers, body }, { firstByteMs: connectTimeoutMs, maxResponseBytes });
    sent.response
      .then((response) => (subscriber.closed ? void response.destroy() : read(response)))
      // After unsubscribing the failure is ours (the request was aborted): nobody is told.
      .catch((error: unknown) => void (subscriber.closed || fail(error)));

    return () => {
      sent.abort();
      void reader?.cancel();
    };
  });
}
