/**
 * One POST whose answer is an SSE stream, as an Observable of its records.
 *
 * Read with undici's `dispatch` (`kernelStream`), each chunk parsed as it arrives
 * (`readRecords`, `SseRecordParser`), its records handed on at once: a
 * JSON-RPC stream is one POST that ends when its body ends, so a
 * browser-style EventSource (reconnects, retries, a fetch and web streams
 * over the socket) only had to be disarmed.
 *
 *   POST → 200 text/event-stream, records a b, body ends   --a--b--|
 *   POST → JSON (any status), or fails, or times out        --#  (AguiError)
 *   body cut by the transport (chunked body without end)   --a--#  (A2A_UNAVAILABLE)
 *   a record grows past maxRecordBytes                     --a--#  (A2A_PROTOCOL_ERROR)
 *   unsubscribe                                            the request is destroyed
 */
import { Observable, type Subscriber } from "rxjs";
import { AguiError } from "../errors.js";
import { readRecords, type ReadGate } from "./body-reader.js";
import type { KernelAnswer } from "./kernel-dispatch.js";
import { kernelStream, type SentStream } from "./kernel-fetch.js";
import { unavailable } from "./rpc-errors.js";
import { SseRecordParser, type SseRecord } from "./sse-parser.js";

export type { SseRecord } from "./sse-parser.js";

export interface SsePost {
  url: string;
  headers: Record<string, string>;
  body: string;
  /** Until the response headers (or a JSON error body) have arrived. */
  connectTimeoutMs: number;
  /** One SSE record, in bytes; a longer one fails the stream with A2A_PROTOCOL_ERROR (see SseRecordParser). */
  maxRecordBytes: number;
  /** A JSON answer instead of the stream, in bytes (see kernelStream). */
  maxResponseBytes: number;
  /** While closed, the body is not read on (see `readRecords`). */
  gate?: ReadGate;
}

/** Records of the stream in order; completes when the server ends the body. Each subscription is one POST. */
export function postSse({ url, headers, body, connectTimeoutMs, maxRecordBytes, maxResponseBytes, gate }: SsePost): Observable<SseRecord> {
  return new Observable<SseRecord>((subscriber) =>
    readAnswer(kernelStream(url, { headers, body }, { firstByteMs: connectTimeoutMs, maxResponseBytes }), subscriber, maxRecordBytes, gate),
  );
}

/**
 * Outside `postSse`, whose scope holds the request's body (the conversation,
 * maybe megabytes) and headers: the handlers made here live as long as the
 * stream stays open, and keep only what they use.
 */
function readAnswer(sent: SentStream, subscriber: Subscriber<SseRecord>, maxRecordBytes: number, gate: ReadGate | undefined) {
  const fail = (error: unknown) => subscriber.error(error instanceof AguiError ? error : unavailable(error));
  let reading: { cancel(): void } | undefined;

  const read = (response: KernelAnswer) => {
    const parser = new SseRecordParser((record) => subscriber.next(record), maxRecordBytes);
    reading = readRecords(response, parser, (cut) => (cut === undefined ? subscriber.complete() : fail(cut)), gate);
  };

  sent.response
    .then((response) => (subscriber.closed ? void response.destroy() : read(response)))
    // After unsubscribing the failure is ours (the request was aborted): nobody is told.
    .catch((error: unknown) => void (subscriber.closed || fail(error)));

  return () => {
    sent.abort();
    reading?.cancel();
  };
}
