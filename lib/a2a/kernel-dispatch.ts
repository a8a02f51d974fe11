/**
 * A stream request to the kernel sent with undici's `dispatch`, the hot
 * path of every run: the answer's body bytes are handed to one listener as
 * the parser finds them, with no `Readable` (its push, its buffer, its
 * events) and no promise per chunk between the socket and `readRecords`.
 * With `node:http` every record of the kernel (one HTTP chunk each) went
 * from its C++ parser into JavaScript and through a Readable's push and
 * emit: 1.5–1.8 µs of the service's CPU per text delta under
 * `npm run bench -- peer`'s load, against about 0.9 µs here (undici's
 * WebAssembly parser included).
 *
 * `KernelAnswer` is the response as `readRecords` and `kernel-fetch.ts`
 * read it: the few members of a Readable they use (one listener per
 * event), and the answer's status and content type.
 */
import { buildConnector, Client, type Dispatcher } from "undici";
import type { RecordBody } from "./body-reader.js";
import { loopbackLookup } from "./loopback.js";

/**
 * Each stream is its own undici `Client`, one connection, loopback only
 * (`loopback.ts`), destroyed when the stream ends or is given up: a pooled
 * connection would keep a keep-alive timer (and, after an abort, a new
 * connection) behind every run. No timer of undici's own either: the first
 * byte, connecting included, has its own limit (`kernel-fetch.ts`), and a
 * stream may be quiet for as long as its agent thinks. One connection per
 * run costs a loopback connect, next to a stream of hundreds of records.
 * The connector is one for every client: given options, each client builds
 * its own, with a TLS session cache (a Map and a FinalizationRegistry) that
 * a plain loopback connection never uses, kept for as long as the stream
 * is open (about 0.5 KiB of each idle stream's heap).
 */
const CLIENT_OPTIONS: Client.Options = {
  connect: buildConnector({ lookup: loopbackLookup(), timeout: 0 }),
  headersTimeout: 0,
  bodyTimeout: 0,
  pipelining: 1,
};

/**
 * What closes a stream's connection once its answer has ended (or failed): one error for every stream.
 * Without one, undici makes a `ClientDestroyedError` per stream, and the socket destroyed with it formats
 * its stack (Node reads `error.stack` on destroy): about 50 µs of a run's CPU, for an error nobody sees.
 */
const STREAM_ENDED = new Error("the kernel stream ended");

type Listener<A extends unknown[]> = ((...args: A) => void) | undefined;

/**
 * The kernel's answer, from its headers on. Chunks that come before anyone
 * listens (the headers' packet often brings the first records) are kept and
 * handed over, in order, when a `data` listener is set; an end or a failure
 * that comes meanwhile is told after them.
 */
export class KernelAnswer implements RecordBody {
  readonly statusCode: number;
  /**
   * Of its headers, the one read (whether it is a stream). A stream keeps its answer while it is open: all of
   * them, as a table, were about 0.3 KiB of each idle stream's heap.
   */
  readonly contentType: string | undefined;
  destroyed = false;
  readableEnded = false;
  #paused = false;
  #resume: () => void;
  #abort: (error?: Error) => void;
  #onData: Listener<[Buffer]>;
  #onEnd: Listener<[]>;
  #onError: Listener<[unknown]>;
  #onClose: Listener<[]>;
  /** What came before a `data` listener: chunks, then (at most) how the answer ended. */
  #early: Buffer[] | undefined = [];
  #earlyEnd: { error?: unknown } | undefined;

  constructor(statusCode: number, contentType: string | undefined, resume: () => void, abort: (error?: Error) => void) {
    this.statusCode = statusCode;
    this.contentType = contentType;
    this.#resume = resume;
    this.#abort = abort;
  }

  on(event: "data", listener: (chunk: Buffer) => void): this;
  on(event: "error", listener: (error: unknown) => void): this;
  on(event: string, listener: (...args: never[]) => void): this {
    if (event === "data") {
      this.#onData = listener as (chunk: Buffer) => void;
      this.#flushEarly();
    } else if (event === "error") this.#onError = listener as (error: unknown) => void;
    return this;
  }

  once(event: "end" | "close", listener: () => void): this {
    if (event === "end") this.#onEnd = listener;
    else this.#onClose = listener;
    return this;
  }

  pause(): this {
    this.#paused = true;
    return this;
  }

  resume(): this {
    if (!this.#paused) return this;
    this.#paused = false;
    if (!this.destroyed && !this.readableEnded) this.#resume();
    return this;
  }

  isPaused(): boolean {
    return this.#paused;
  }

  /** Gives the request up: its connection is closed, and nothing more is told. */
  destroy(): this {
    if (this.destroyed) return this;
    this.destroyed = true;
    this.#early = undefined;
    this.#abort();
    return this;
  }

  /** undici's `onData`: false asks it to stop reading the socket until `resume`. */
  take(chunk: Buffer): boolean {
    if (this.destroyed) return false;
    if (this.#early !== undefined) this.#early.push(chunk);
    else this.#onData?.(chunk);
    return !this.#paused;
  }

  ended(error?: unknown): void {
    if (this.destroyed) return;
    if (this.#early !== undefined) {
      this.#earlyEnd = { error };
      return;
    }
    if (error === undefined) {
      this.readableEnded = true;
      this.#onEnd?.();
    } else {
      this.destroyed = true;
      this.#onError?.(error);
    }
    this.#onClose?.();
  }

  #flushEarly(): void {
    const early = this.#early;
    if (early === undefined) return;
    this.#early = undefined;
    for (const chunk of early) {
      if (this.destroyed) return;
      this.#onData?.(chunk);
    }
    // Told once the reader has set its other listeners, which it does right after this one.
    const end = this.#earlyEnd;
    if (end !== undefined) process.nextTick(() => this.ended(end.error));
  }
}

export interface DispatchedRequest {
  url: URL;
  method: "POST";
  headers: Record<string, string>;
  body: string;
}

/**
 * Bodies up to this size go as a Buffer, larger ones as a one-time iterable
 * (`sentOnce`). undici keeps its request, and a Buffer body with it, until
 * the answer ends, and a run's request may carry megabytes (images, a
 * replayed history) while its stream stays open for hours; a finished
 * generator holds nothing. An iterable is written a turn later, apart from
 * the headers: about 0.2 ms more to the first byte on loopback.
 */
const KEEP_BODY_BELOW_BYTES = 16 * 1024;

function* sentOnce(payload: Buffer): Generator<Buffer, void, undefined> {
  yield payload;
}

/**
 * Sends the request; `onAnswer` gets the answer once its headers are read
 * (any status: a redirect is the caller's to refuse), `onFailure` a failure
 * before them. The returned `abort` destroys the request (and its answer)
 * at any time.
 */
export function dispatchToKernel(
  { url, method, headers, body }: DispatchedRequest,
  onAnswer: (answer: KernelAnswer) => void,
  onFailure: (error: unknown) => void,
): (error?: Error) => void {
  const origin = originOf(url);
  const request = new KernelRequest(new Client(origin.url, CLIENT_OPTIONS), onAnswer, onFailure);
  const payload = Buffer.from(body);
  request.client.dispatch(
    {
      origin: origin.text,
      path: `${url.pathname}${url.search}`,
      method,
      headers: { ...headers, "Content-Length": String(payload.length) },
      body:
        payload.length < KEEP_BODY_BELOW_BYTES
          ? payload
          : // An iterable is a body as undici documents it (`Dispatcher.md`), though its types name only a Readable.
            (sentOnce(payload) as unknown as Dispatcher.DispatchOptions["body"]),
    },
    request,
  );
  return request.abort;
}

/**
 * One stream's request, as undici's handler: undici keeps its handler, and
 * the stream its `abort`, for as long as the answer is read, so the hooks
 * are one object's methods, not a closure each over a shared scope (about
 * 0.4 KiB of each idle stream's heap).
 */
class KernelRequest implements Dispatcher.DispatchHandlers {
  readonly client: Client;
  readonly #onAnswer: (answer: KernelAnswer) => void;
  readonly #onFailure: (error: unknown) => void;
  #abortRequest: ((error: Error) => void) | undefined;
  #givenUp: Error | undefined;
  #finished = false;
  #answer: KernelAnswer | undefined;

  constructor(client: Client, onAnswer: (answer: KernelAnswer) => void, onFailure: (error: unknown) => void) {
    this.client = client;
    this.#onAnswer = onAnswer;
    this.#onFailure = onFailure;
  }

  // Every stream's teardown calls this, after its end too: the error is made only for a request still under way.
  readonly abort = (error?: Error): void => {
    if (this.#finished || this.#givenUp !== undefined) return;
    this.#givenUp = error ?? new Error("the request to the kernel was given up");
    this.#abortRequest?.(this.#givenUp);
    this.#closeClient(this.#givenUp);
  };

  onConnect(abortIt: (error: Error) => void): void {
    this.#abortRequest = abortIt;
    if (this.#givenUp !== undefined) abortIt(this.#givenUp);
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[] | string[] | null, resume: () => void): boolean {
    // 1xx: informational, the answer is still to come.
    if (statusCode < 200) return true;
    const answer = new KernelAnswer(statusCode, contentTypeOf(rawHeaders), resume, this.abort);
    this.#answer = answer;
    this.#onAnswer(answer);
    return !answer.isPaused() && !answer.destroyed;
  }

  onData(chunk: Buffer): boolean {
    return this.#answer?.take(chunk) ?? false;
  }

  onComplete(): void {
    this.#finished = true;
    this.#closeClient();
    this.#answer?.ended();
  }

  onError(error: Error): void {
    this.#finished = true;
    this.#closeClient();
    if (this.#answer !== undefined) this.#answer.ended(error);
    else this.#onFailure(error);
  }

  /** A request still queued fails with `error` (a limit's, say), not with the client's own. */
  #closeClient(error: Error = STREAM_ENDED): void {
    void this.client.destroy(error).catch(() => {});
  }
}

/**
 * The kernel's origin, parsed once for all its streams: undici keeps, for as
 * long as a stream is open, the URL its client parses of the origin it is
 * given (a URL object is taken as it is) and the request's origin text
 * (about 0.4 KiB of each idle stream's heap). Every stream goes to the one
 * kernel, so one entry is enough.
 */
let lastOrigin: { text: string; url: URL } | undefined;

function originOf(url: URL): { text: string; url: URL } {
  const text = url.origin;
  if (lastOrigin?.text !== text) lastOrigin = { text, url: new URL(text) };
  return lastOrigin;
}

/** undici's raw headers (name, value, name, value…): the Content-Type, as node:http gives it (repeated ones joined). */
function contentTypeOf(raw: Buffer[] | string[] | null): string | undefined {
  let contentType: string | undefined;
  if (raw === null) return contentType;
  for (let at = 0; at + 1 < raw.length; at += 2) {
    if (raw[at]!.toString().toLowerCase() !== "content-type") continue;
    const value = raw[at + 1]!.toString();
    contentType = contentType === undefined ? value : `${contentType}, ${value}`;
  }
  return contentType;
}
