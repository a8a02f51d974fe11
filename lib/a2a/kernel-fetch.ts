/**
 * Every HTTP request to the kernel, unary or streaming, is sent here, so
 * each one holds the same rules: its URL and the addresses it connects to
 * are loopback (`loopback.ts`), a redirect is never followed (a fetch
 * would re-POST the body, the user's LLM key and cloud credentials in it,
 * to wherever the kernel points), and a non-SSE answer is read within a
 * size limit. Unary calls go through node-fetch; a stream is read with
 * undici's `dispatch` (`kernelStream`), the hot path of every run.
 */
import type { Readable } from "node:stream";
import fetch, { FetchError, type RequestInit, type Response } from "node-fetch";
import { dispatchToKernel, type KernelAnswer } from "./kernel-dispatch.js";
import { loopbackAgent, refusalOf } from "./loopback.js";
import { protocolError, resultOfHttp, unavailable } from "./rpc-errors.js";

/**
 * The response, its headers read, for any status but a redirect: a 3xx is
 * A2A_UNAVAILABLE, as is a URL that is not loopback (nothing is sent then).
 * `maxResponseBytes` bounds what `readAnswer` will read of the body.
 */
export async function kernelFetch(url: string, init: RequestInit, maxResponseBytes: number): Promise<Response> {
  const refusal = refusalOf(url);
  if (refusal !== undefined) throw unavailable(new Error(`a request to the kernel was refused: ${refusal}`));
  const response = await fetch(url, { ...init, redirect: "manual", agent: loopbackAgent, size: maxResponseBytes });
  if (response.status >= 300 && response.status < 400) {
    (response.body as Readable | null)?.destroy();
    throw unavailable(new Error(`the kernel answered HTTP ${response.status}; redirects are never followed`), response.status);
  }
  return response;
}

/** A non-SSE answer's body as text; one larger than the request's `maxResponseBytes` is A2A_PROTOCOL_ERROR, read no further. */
export async function readAnswer(response: Response): Promise<string> {
  try {
    return await response.text();
  } catch (error) {
    if (error instanceof FetchError && error.type === "max-size") throw protocolError(error);
    throw error;
  }
}

export interface StreamRequest {
  headers: Record<string, string>;
  body: string;
}

export interface StreamLimits {
  /** Until the response's headers have arrived, and a JSON answer's body with them. */
  firstByteMs: number;
  /** A JSON answer instead of the stream, in bytes; a larger one is A2A_PROTOCOL_ERROR. */
  maxResponseBytes: number;
}

/** A stream request on its way: its response once it is an SSE stream, and how to give it up. */
export interface SentStream {
  response: Promise<KernelAnswer>;
  /** Destroys the request, and the response with it; `response` then settles no more, or rejects. */
  abort(): void;
}

/**
 * A POST answered with an SSE stream, sent with undici's `dispatch`
 * (`kernel-dispatch.ts`): the response is the body to read, with no fetch
 * layer and no Readable over the socket (see `sse-stream.ts`). It resolves
 * only to a 2xx `text/event-stream`; the same rules as `kernelFetch` hold
 * (loopback only, a redirect is A2A_UNAVAILABLE), and any other answer is
 * read as JSON within `maxResponseBytes` and rejects as the typed error it
 * carries (a JSON result where a stream was asked for is
 * A2A_PROTOCOL_ERROR). Failing to connect, or no headers within
 * `firstByteMs`, rejects with the cause.
 */
export function kernelStream(url: string, { headers, body }: StreamRequest, limits: StreamLimits): SentStream {
  const refusal = refusalOf(url);
  if (refusal !== undefined) {
    return { response: Promise.reject(unavailable(new Error(`a request to the kernel was refused: ${refusal}`))), abort: () => {} };
  }
  // No closure here: what the open stream holds on to is not the request's body (the conversation, maybe megabytes).
  const answer = awaitStream(limits);
  return answer.sent(dispatchToKernel({ url: new URL(url), method: "POST", headers, body }, answer.onAnswer, answer.onFailure));
}

/** The answer to a stream request, as `kernelStream` resolves it, once `sent` is told how to give the request up. */
function awaitStream({ firstByteMs, maxResponseBytes }: StreamLimits) {
  let abort: (error?: Error) => void = () => {};
  let firstByte: ReturnType<typeof setTimeout> | undefined;
  let resolve!: (answer: KernelAnswer) => void;
  let reject!: (error: unknown) => void;
  const response = new Promise<KernelAnswer>((resolved, rejected) => {
    resolve = resolved;
    reject = rejected;
  });
  // The timer is let go once cleared: the stream's `abort` keeps this scope for as long as the stream is open.
  const stopFirstByte = () => {
    clearTimeout(firstByte);
    firstByte = undefined;
  };
  const onFailure = (error: unknown) => {
    stopFirstByte();
    reject(error);
  };
  const onAnswer = (answer: KernelAnswer) => {
    const status = answer.statusCode;
    if (status >= 300 && status < 400) {
      answer.destroy();
      return onFailure(unavailable(new Error(`the kernel answered HTTP ${status}; redirects are never followed`), status));
    }
    if (status >= 200 && status < 300 && answer.contentType?.startsWith("text/event-stream")) {
      stopFirstByte();
      return resolve(answer);
    }
    readText(answer, maxResponseBytes)
      .then((text) => {
        resultOfHttp(status, text);
        throw protocolError(new Error("a streaming call was answered with a JSON result"));
      })
      .catch(onFailure);
  };
  const sent = (abortRequest: (error?: Error) => void): SentStream => {
    abort = abortRequest;
    firstByte = setTimeout(() => abort(new Error(`no answer within ${firstByteMs} ms`)), firstByteMs);
    return {
      response,
      abort: () => {
        stopFirstByte();
        abort();
      },
    };
  };
  return { onAnswer, onFailure, sent };
}

/** A response's body as text; past `maxBytes` it is destroyed and the read fails with A2A_PROTOCOL_ERROR. */
function readText(response: KernelAnswer, maxBytes: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    response.once("end", () => resolve(Buffer.concat(chunks, bytes).toString("utf8")));
    response.on("error", reject);
    response.on("data", (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes <= maxBytes) return void chunks.push(chunk);
      response.destroy();
      reject(protocolError(new Error(`the kernel's answer passed ${maxBytes} bytes`)));
    });
  });
}
