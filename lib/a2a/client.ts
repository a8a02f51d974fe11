/**
 * The kernel's A2A 1.0 JSON-RPC API (wire contract §1), one method per call.
 * Every failure is an AguiError (see `rpc-errors.ts`); streams are cold
 * Observables of each frame's `result`, and end when the kernel closes them.
 * An agent that speaks A2A 0.3 is called in 0.3's words and answers as a 1.0
 * agent would (`dialect-v03.ts`): callers never see the difference.
 */
import { randomUUID } from "node:crypto";
import { A2A_PROTOCOL_VERSION, A2A_VERSION_HEADER } from "@a2a-js/sdk";
import { context, propagation } from "@opentelemetry/api";
import type { RequestInit } from "node-fetch";
import { Observable, type Subscriber } from "rxjs";
import { operate } from "../rx/operate.js";
import { AguiError } from "../errors.js";
import { kernelFetch, readAnswer } from "./kernel-fetch.js";
import {
  DEFAULT_KERNEL_FIRST_BYTE_TIMEOUT_S,
  DEFAULT_KERNEL_REQUEST_TIMEOUT_MS,
  DEFAULT_MAX_KERNEL_RECORD_BYTES,
  DEFAULT_MAX_KERNEL_RESPONSE_BYTES,
} from "./limits.js";
import { paramsToV03, streamResultFromV03, taskResultFromV03, v03Method } from "./dialect-v03.js";
import type { A2aDialect } from "./dialect.js";
import { largeRecordsInSlices } from "./large-records.js";
import { parseJson, resultOf, resultOfHttp, rpcErrorOf, streamErrorOf, unavailable, type JsonRpcResult } from "./rpc-errors.js";
import type { ReadGate } from "./body-reader.js";
import { postSse, type SseRecord } from "./sse-stream.js";

export { rpcErrorOf, type JsonRpcResult, type RpcError } from "./rpc-errors.js";

export interface A2AClientOptions {
  /** The kernel's JSON-RPC URL; its other routes (pipeline state) hang below it. */
  url: string;
  /** Sent as `Authorization: Bearer <token>`. */
  token?: string;
  /** Unary calls, and a stream until its response has started. Default `DEFAULT_KERNEL_REQUEST_TIMEOUT_MS`. */
  requestTimeoutMs?: number;
  /**
   * Until a call's response (a stream's too) has started: its headers. Default `DEFAULT_KERNEL_FIRST_BYTE_TIMEOUT_S`;
   * never more than `requestTimeoutMs`, and not for `ensureRestored` (see `limits.ts`).
   */
  firstByteTimeoutMs?: number;
  /** One SSE record of a stream, in bytes; past it the stream fails with A2A_PROTOCOL_ERROR. */
  maxRecordBytes?: number;
  /** A non-SSE (JSON) answer, in bytes; past it the call fails with A2A_PROTOCOL_ERROR. */
  maxResponseBytes?: number;
  /**
   * The dialect the agent speaks: fixed, or asked before each call of a
   * source that reads the agent's card (`dialect.ts`), told to `forget` it
   * when the agent could not be reached (it may come back another). Default 1.0.
   */
  dialect?: A2aDialect | DialectSource;
}

/** What the client asks of `AgentCardSource`. */
export interface DialectSource {
  dialect(): Promise<A2aDialect>;
  /** What `dialect()` would answer, when known without waiting; a stream then starts without a promise between. */
  settled?(): A2aDialect | undefined;
  forget(): void;
}

/** How a 0.3 answer to each unary method reads as the 1.0 answer. */
const V03_RESULTS: Readonly<Record<string, (result: JsonRpcResult) => JsonRpcResult>> = {
  SendMessage: streamResultFromV03,
  GetTask: taskResultFromV03,
  CancelTask: taskResultFromV03,
};

export interface StreamOptions {
  /** The reader's backpressure: while the gate is closed the stream is not read on, and TCP holds the kernel back. */
  gate?: ReadGate;
}

export class A2AClient {
  readonly #url: string;
  // A private field, so that inspecting or logging the client never shows it.
  readonly #token: string | undefined;
  readonly #timeoutMs: number;
  readonly #firstByteMs: number;
  readonly #maxRecordBytes: number;
  readonly #maxResponseBytes: number;
  readonly #dialect: DialectSource;

  constructor(options: A2AClientOptions) {
    this.#url = options.url;
    this.#token = options.token;
    this.#timeoutMs = options.requestTimeoutMs ?? DEFAULT_KERNEL_REQUEST_TIMEOUT_MS;
    this.#firstByteMs = Math.min(options.firstByteTimeoutMs ?? DEFAULT_KERNEL_FIRST_BYTE_TIMEOUT_S * 1000, this.#timeoutMs);
    this.#maxRecordBytes = options.maxRecordBytes ?? DEFAULT_MAX_KERNEL_RECORD_BYTES;
    this.#maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_KERNEL_RESPONSE_BYTES;
    const dialect = options.dialect ?? "1.0";
    this.#dialect =
      typeof dialect === "string" ? { dialect: () => Promise.resolve(dialect), settled: () => dialect, forget: () => {} } : dialect;
  }

  /** SendStreamingMessage: each SSE `data:` frame's `result`, in order; completes when the kernel closes the stream. */
  sendStreamingMessage(params: unknown, options: StreamOptions = {}): Observable<JsonRpcResult> {
    return this.#stream("SendStreamingMessage", params, options);
  }

  /** SubscribeToTask: a Task snapshot, then live events; stays open while the task is parked. */
  subscribeToTask(taskId: string, options: StreamOptions = {}): Observable<JsonRpcResult> {
    return this.#stream("SubscribeToTask", { id: taskId }, options);
  }

  sendMessage(params: unknown): Promise<JsonRpcResult> {
    return this.#call("SendMessage", params);
  }

  /** The bare Task. */
  getTask(taskId: string, historyLength = 100): Promise<JsonRpcResult> {
    return this.#call("GetTask", { id: taskId, historyLength });
  }

  /** The Task in TASK_STATE_CANCELED; -32002 (see rpcErrorOf) when it cannot be canceled. */
  cancelTask(taskId: string): Promise<JsonRpcResult> {
    return this.#call("CancelTask", { id: taskId });
  }

  /** ListTasks (A2A 1.0): the context's tasks, newest first, `{tasks, nextPageToken}`. A 0.3 agent cannot list: none. */
  async listTasks(contextId: string, pageSize = 20): Promise<JsonRpcResult> {
    if ((await this.#dialect.dialect()) === "0.3") return { tasks: [] };
    return this.#call("ListTasks", { contextId, pageSize, historyLength: 0 });
  }

  /** GET <base>/iac-code/pipeline/state; undefined on 404, which means "nothing to recover". */
  async getPipelineState(taskId: string, afterSequence: number): Promise<unknown | undefined> {
    const base = this.#url.endsWith("/") ? this.#url : `${this.#url}/`;
    const url = new URL("iac-code/pipeline/state", base);
    url.search = new URLSearchParams({ taskId, afterSequence: String(afterSequence) }).toString();
    const { status, text } = await this.#fetch(url.toString(), { method: "GET", headers: this.#headers("application/json") });
    if (status === 404) return undefined;
    if (status < 200 || status >= 300) throw unavailable(new Error(`HTTP ${status}: ${text.slice(0, 200)}`), status);
    return parseJson(text);
  }

  /**
   * `<base>/iac-code/handoff/<op>` (wire contract §10): GET for `capabilities`, else POST of `body` as it is.
   * The kernel's JSON answer; undefined on 404, a kernel without session handoff. Any other status, or an
   * answer that is no JSON, is A2A_UNAVAILABLE / A2A_PROTOCOL_ERROR.
   */
  async handoff(op: string, body?: unknown): Promise<unknown | undefined> {
    const base = this.#url.endsWith("/") ? this.#url : `${this.#url}/`;
    const url = new URL(`iac-code/handoff/${encodeURIComponent(op)}`, base).toString();
    const init: RequestInit =
      body === undefined
        ? { method: "GET", headers: this.#headers("application/json") }
        : { method: "POST", headers: this.#headers("application/json"), body: JSON.stringify(body) };
    const { status, text } = await this.#fetch(url, init);
    if (status === 404) return undefined;
    if (status < 200 || status >= 300) throw unavailable(new Error(`HTTP ${status}: ${text.slice(0, 200)}`), status);
    return parseJson(text);
  }

  /**
   * `POST <base>/iac-code/session/ensure-restored` (contract §5): asks the
   * kernel to bring a session back before a resume. 200 is `current` or
   * `restored`; 404 is `lost` (the kernel has no such session); a 409 whose
   * `error.code` is SESSION_BACKUP_NOT_READY throws that code (retryable).
   * Any other status is A2A_UNAVAILABLE.
   */
  async ensureRestored(request: EnsureRestoredRequest): Promise<RestoreStatus> {
    const base = this.#url.endsWith("/") ? this.#url : `${this.#url}/`;
    const url = new URL("iac-code/session/ensure-restored", base).toString();
    const { status, text } = await this.#fetch(
      url,
      { method: "POST", headers: this.#headers("application/json"), body: JSON.stringify(request) },
      // A restore answers once it is done: only the request timeout holds it.
      this.#timeoutMs,
    );
    if (status === 404) return "lost";
    if (status === 409 && backupNotReady(text)) throw new AguiError("SESSION_BACKUP_NOT_READY");
    if (status < 200 || status >= 300) throw unavailable(new Error(`HTTP ${status}: ${text.slice(0, 200)}`), status);
    const answer = parseJson(text);
    const said = typeof answer === "object" && answer !== null ? (answer as { status?: unknown }).status : undefined;
    return said === "restored" ? "restored" : "current";
  }

  #stream(method: string, params: unknown, { gate }: StreamOptions): Observable<JsonRpcResult> {
    // Each subscription is its own POST, with its own request id, in the dialect the agent speaks then. One
    // subscriber for the call, not defer, switchMap and tap: a run's stream keeps it for as long as it is open,
    // and switchMap's would keep `params` (the conversation) with it.
    return new Observable<JsonRpcResult>((subscriber) => {
      const open = (dialect: A2aDialect) => {
        if (subscriber.closed) return;
        let records: Observable<JsonRpcResult>;
        try {
          records = this.#records(method, params, dialect, gate);
        } catch (error) {
          return this.#fail(subscriber, error);
        }
        records.subscribe(this.#notingFailure(subscriber));
      };
      // A dialect known already opens the stream at once, with no promise turn before the request goes out.
      const settled = this.#dialect.settled?.();
      if (settled !== undefined) return open(settled);
      this.#dialect.dialect().then(open, (error: unknown) => void (subscriber.closed || this.#fail(subscriber, error)));
    });
  }

  /** The POST of one stream in `dialect`, its records read as results. */
  #records(method: string, params: unknown, dialect: A2aDialect, gate: ReadGate | undefined): Observable<JsonRpcResult> {
    const v03 = dialect === "0.3";
    const request = v03 ? envelope(v03Method(method), paramsToV03(params)) : envelope(method, params);
    const resultOfRecord = resultOfRecordFor(request.id);
    const records = postSse({
      url: this.#url,
      headers: this.#headers("text/event-stream", dialect),
      body: request.text,
      connectTimeoutMs: this.#firstByteMs,
      maxRecordBytes: this.#maxRecordBytes,
      maxResponseBytes: this.#maxResponseBytes,
      gate,
    });
    return records.pipe(largeRecordsInSlices(v03 ? (record, frame) => streamResultFromV03(resultOfRecord(record, frame)) : resultOfRecord));
  }

  /**
   * Feeds `subscriber`, and notes a failure on its way (see `#noteFailure`); made apart from the call's `params`.
   * `tap({error})` as one `operate` subscriber: an item passes with no handler call, on every frame of a stream.
   */
  #notingFailure(subscriber: Subscriber<JsonRpcResult>): Subscriber<JsonRpcResult> {
    return operate({ destination: subscriber, error: (error: unknown) => this.#fail(subscriber, error) });
  }

  #fail(subscriber: Subscriber<JsonRpcResult>, error: unknown): void {
    this.#noteFailure(error);
    subscriber.error(error);
  }

  async #call(method: string, params: unknown): Promise<JsonRpcResult> {
    const dialect = await this.#dialect.dialect();
    const v03 = dialect === "0.3";
    const request = v03 ? envelope(v03Method(method), paramsToV03(params)) : envelope(method, params);
    const { status, text } = await this.#fetch(this.#url, {
      method: "POST",
      headers: this.#headers("application/json", dialect),
      body: request.text,
    });
    const result = resultOfHttp(status, text, request.id);
    return v03 ? (V03_RESULTS[method] ?? ((same) => same))(result) : result;
  }

  /** An agent out of reach may come back as another (a restart, a new version): its card is read again before the next call. */
  #noteFailure(error: unknown): void {
    if (error instanceof AguiError && error.code === "A2A_UNAVAILABLE" && rpcErrorOf(error) === undefined) this.#dialect.forget();
  }

  /**
   * One request, its answer started within `firstByteMs` and read whole within the request timeout; failing to get
   * an answer is A2A_UNAVAILABLE (kernelFetch says what else fails).
   */
  async #fetch(url: string, init: RequestInit, firstByteMs = this.#firstByteMs): Promise<{ status: number; text: string }> {
    const started = new AbortController();
    const firstByte = setTimeout(
      () => started.abort(new Error(`the kernel did not start answering within ${firstByteMs} ms`)),
      firstByteMs,
    );
    try {
      const signal = AbortSignal.any([AbortSignal.timeout(this.#timeoutMs), started.signal]);
      const response = await kernelFetch(url, { ...init, signal }, this.#maxResponseBytes);
      clearTimeout(firstByte);
      return { status: response.status, text: await readAnswer(response) };
    } catch (error) {
      clearTimeout(firstByte);
      const failure = error instanceof AguiError ? error : unavailable(error);
      this.#noteFailure(failure);
      throw failure;
    }
  }

  /**
   * A 0.3 agent is sent no version header: 0.3 has none, and 1.0's is what tells a 1.0 server the call is 1.0.
   * The active trace (the caller's, or this call's span) goes along as `traceparent`, traces exported or not.
   */
  #headers(accept: string, dialect: A2aDialect = "1.0"): Record<string, string> {
    const headers: Record<string, string> = {
      ...(dialect === "1.0" ? { [A2A_VERSION_HEADER]: A2A_PROTOCOL_VERSION } : {}),
      "Content-Type": "application/json",
      Accept: accept,
      ...(this.#token === undefined ? {} : { Authorization: `Bearer ${this.#token}` }),
    };
    propagation.inject(context.active(), headers);
    return headers;
  }
}

/** What `ensureRestored` sends: the thread's workspace and kernel session, and the task when known. */
export interface EnsureRestoredRequest {
  cwd: string;
  sessionId: string;
  taskId?: string;
}

/** `current`: the kernel had the session; `restored`: it brought it back; `lost`: it has none to bring back. */
export type RestoreStatus = "current" | "restored" | "lost";

function backupNotReady(text: string): boolean {
  try {
    const body = JSON.parse(text) as { error?: { code?: unknown } };
    return body.error?.code === "SESSION_BACKUP_NOT_READY";
  } catch {
    return false;
  }
}

/** A JSON-RPC request, as sent, and its id: every answer to it must carry that id (see `resultOf`). */
function envelope(method: string, params: unknown): { id: string; text: string } {
  const id = randomUUID();
  return { id, text: JSON.stringify({ jsonrpc: "2.0", id, method, params }) };
}

/** One SSE record of the stream answering `requestId` → its `result`; `event: error` records are the kernel's mid-stream errors. */
const resultOfRecordFor =
  (requestId: string) =>
  ({ event, data }: SseRecord, frame: unknown = parseJson(data)): JsonRpcResult => {
    if (event === "error") throw streamErrorOf(frame);
    return resultOf(frame, requestId);
  };

/** The kernel calls a run makes (and an observer, a subset): what a run is given, so it can be stopped or gated from outside. */
export type RunA2A = Pick<
  A2AClient,
  | "sendStreamingMessage"
  | "sendMessage"
  | "subscribeToTask"
  | "getTask"
  | "cancelTask"
  | "getPipelineState"
  | "listTasks"
  | "ensureRestored"
>;
