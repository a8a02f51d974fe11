/**
 * Every HTTP request to the kernel, unary or streaming, is sent here, so
 * each one holds the same rules: its URL and the addresses it connects to
 * are loopback (`loopback.ts`), a redirect is never followed (node-fetch
 * would re-POST the body, the user's LLM key and cloud credentials in it,
 * to wherever the kernel points), and a non-SSE answer is read within a
 * size limit.
 */
import type { Readable } from "node:stream";
import fetch, { FetchError, type RequestInit, type Response } from "node-fetch";
import { loopbackAgent, refusalOf } from "./loopback.js";
import { protocolError, unavailable } from "./rpc-errors.js";

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
