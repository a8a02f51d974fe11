/**
 * One POST whose answer is an SSE stream, as an Observable of its records.
 *
 * `eventsource-client` is made for GET streams that live forever: it
 * reconnects when the body ends, retries a failed fetch silently, and reads
 * any status and content type as a stream. A JSON-RPC stream is none of
 * that, so the fetch it gets is wrapped and every reconnect is refused.
 *
 *   POST → 200 text/event-stream, records a b, body ends   --a--b--|
 *   POST → JSON (any status), or fetch fails, or times out  --#  (AguiError)
 *   body cut by the transport (chunked body without end)   --a--#  (A2A_UNAVAILABLE)
 *   a record grows past maxRecordBytes                     --a--#  (A2A_PROTOCOL_ERROR)
 *   unsubscribe                                            the fetch is aborted
 */
import type { Readable } from "node:stream";
import { Observable } from "rxjs";
import { createEventSource, type EventSourceMessage, type FetchLike, type FetchLikeInit } from "eventsource-client";
import { AguiError } from "../errors.js";
import { limitRecordBytes, readBody, type ReadGate } from "./body-reader.js";
import { kernelFetch, readAnswer } from "./kernel-fetch.js";
import { protocolError, resultOfHttp, unavailable } from "./rpc-errors.js";

export interface SsePost {
  url: string;
  headers: Record<string, string>;
  body: string;
  /** Until the response headers (or a JSON error body) have arrived. */
  connectTimeoutMs: number;
  /** One SSE record, in bytes; a longer one fails the stream with A2A_PROTOCOL_ERROR (see limitRecordBytes). */
  maxRecordBytes: number;
  /** A JSON answer instead of the stream, in bytes (see kernelFetch). */
  maxResponseBytes: number;
  /** While closed, the body is not read on (see `readBody`). */
  gate?: ReadGate;
}

/** Records of the stream in order; completes when the server ends the body. Each subscription is one POST. */
export function postSse({
  url,
  headers,
  body,
  connectTimeoutMs,
  maxRecordBytes,
  maxResponseBytes,
  gate,
}: SsePost): Observable<EventSourceMessage> {
  return new Observable<EventSourceMessage>((subscriber) => {
    // Why the body ended early, if the transport cut it (see readBody) or a record grew too large; the first cause is kept.
    let cut: unknown;

    const fail = (error: unknown) => subscriber.error(error instanceof AguiError ? error : unavailable(error));

    const guardedFetch: FetchLike = async (input, init) => {
      const closed = init?.signal as AbortSignal;
      const attempt = new AbortController();
      const abort = () => attempt.abort();
      closed.addEventListener("abort", abort, { once: true });
      const timer = setTimeout(abort, connectTimeoutMs);
      try {
        const response = await kernelFetch(String(input), { ...fetchInit(init), signal: attempt.signal }, maxResponseBytes);
        if (!response.headers.get("content-type")?.startsWith("text/event-stream") || !response.ok) {
          resultOfHttp(response.status, await readAnswer(response));
          throw protocolError(new Error("a streaming call was answered with a JSON result"));
        }
        if (response.body) limitRecordBytes(response.body as Readable, maxRecordBytes, (error) => (cut ??= error));
        return {
          // Anything with getReader() passes for a web stream there (its getStream); the type names the whole interface.
          body:
            response.body &&
            (readBody(response.body as Readable, (error) => (cut ??= error), gate) as unknown as ReadableStream<Uint8Array>),
          url: response.url,
          status: response.status,
          redirected: response.redirected,
        };
      } catch (error) {
        // After close() the abort is ours; eventsource-client ignores it too.
        if (!closed.aborted) {
          fail(attempt.signal.aborted ? new Error(`no answer within ${connectTimeoutMs} ms`, { cause: error }) : error);
        }
        throw error;
      } finally {
        clearTimeout(timer);
      }
    };

    const source = createEventSource({
      url,
      method: "POST",
      headers,
      body,
      fetch: guardedFetch,
      onMessage: (message) => subscriber.next(message),
      // Called when the body has ended, right after a reconnect was
      // scheduled (the POST would be sent again): close() clears that timer.
      onDisconnect: () => {
        source.close();
        if (cut === undefined) subscriber.complete();
        else fail(cut);
      },
      // Every reconnect is refused: a POST must not be re-sent. The end of
      // the body also passes here, with onDisconnect following synchronously;
      // a failure the wrapper did not see does not, and must not leave the
      // subscriber waiting.
      onScheduleReconnect: () => {
        source.close();
        queueMicrotask(() => {
          if (!subscriber.closed) fail(new Error("the SSE stream failed"));
        });
      },
    });

    return () => source.close();
  });
}

/** eventsource-client's request options, narrowed to what node-fetch takes; kernelFetch decides on redirects. */
function fetchInit(init: FetchLikeInit | undefined) {
  return { method: init?.method, headers: init?.headers, body: init?.body };
}
