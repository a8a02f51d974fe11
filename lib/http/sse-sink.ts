/**
 * The Express end of a stream (a run, or an observer): writes each AG-UI
 * event in the stream's encoding (see `event-encoding.ts`): by default
 * one SSE `data: <json>` record, LF-only (the AG-UI client's parser breaks
 * on CRLF), and each heartbeat as the comment `: heartbeat`; or, for a
 * client that asked for protobuf, one length-prefixed protobuf frame, and
 * no heartbeat at all. Everything below holds for both.
 *
 * A client that goes away unsubscribes the run, which cancels the upstream
 * task (see `endOfRun` in `run.ts`) — also one that left before the sink started
 * (while its run was admitted), whose run is started and left at once.
 *
 * Backpressure, end to end: once the response holds more than
 * `highWaterMark` unsent bytes (`res.writableLength`, what Node holds that
 * the socket has not taken), the sink closes the stream's `FlowGate`, and
 * the stream stops reading its kernel (see `flow-gate.ts`) until the
 * response's `drain`: TCP holds the kernel back, and a client that reads
 * slowly or in bursts gets every byte at its own pace. What a stream holds
 * for its client is thus bounded: the mark, plus what the piece of kernel
 * stream being parsed when the gate closed projects to (one socket read,
 * 64 KiB), plus one 64 KiB write, plus one event (an event is written
 * whole, however large).
 *
 * A client counts as gone only when it takes nothing at all for `stallMs`
 * while bytes wait for it: the connection is destroyed and the run
 * unsubscribed, exactly as on a disconnect, so its A2A task is cancelled.
 * What it took is what the operating system accepted from the socket, not
 * what Node finished writing: one large event is one write, which Node
 * counts only once the last of its bytes left, so a slow but steady reader
 * of a multi-megabyte tool result would look idle for minutes. The socket
 * handle's queue shrinks each time the system takes more of such a write
 * (it wakes the socket once about a third of its send buffer is free), and
 * that counts as taken. A client slower than that third of the send buffer
 * (up to about 1.4 MB on Linux) per `stallMs` would still look idle, so on
 * Linux the sink also reads what the system holds unacknowledged for the
 * connection (`system-send-queue.ts`): it shrinks each time the client's
 * system opens its window again, every 64 KiB to a few hundred KiB the
 * reader takes (the step grows with the client's receive buffer), so
 * what still looks idle is a reader slower than that step per `stallMs`.
 *
 * The records of one tick go out as one write on the next tick, or as soon
 * as they pass 64 KiB: one kernel chunk often yields many events, and each
 * write of a chunked response costs its own framing and socket buffer
 * (writing per event cost the service about a quarter of its CPU per event
 * in `npm run bench`).
 */
import { EventType, type AGUIEvent } from "@ag-ui/core";
import type { Response } from "express";
import type { Observable, Subscription } from "rxjs";
import { HEARTBEAT } from "../../operators/merge-heartbeat.js";
import { DEFAULT_CLIENT_STALL_S } from "../config.js";
import { holdsLongString, jsonPieces, LARGE_JSON_CHARS, nextTurn } from "../a2a/large-json.js";
import { AguiError } from "../errors.js";
import { DEFAULT_LANGUAGE, messageFor } from "../i18n/index.js";
import type { SseItem } from "../run-pipeline.js";
import { encodeSseEvent, SSE_ENCODING, SSE_HEARTBEAT, type EventEncoding } from "./event-encoding.js";
import { FlowGate } from "../runs/flow-gate.js";
import { connectionKey, systemSendQueue } from "./system-send-queue.js";

/**
 * 256 KiB: a client that keeps up never leaves this much unsent (the
 * socket takes each write at once, and the kernel's socket buffers hold
 * megabytes more), and a thousand clients that stop reading hold at most
 * a few hundred MiB between them.
 */
export const DEFAULT_HIGH_WATER_MARK = 256 * 1024;

/** `IAC_CODE_AGUI_CLIENT_STALL_S`'s default (see `config.ts`). */
export const DEFAULT_STALL_MS = DEFAULT_CLIENT_STALL_S * 1000;

/** A response with unsent bytes is looked at this often (a quarter of `stallMs` when shorter). */
const STALL_CHECK_MS = 1000;

/**
 * Records of one tick are written together, but at most 64 KiB at once:
 * text counted in UTF-16 units (no byte count per event), each of which is
 * at most 3 bytes of UTF-8.
 */
const FLUSH_AT_BYTES = 64 * 1024;
const sizeBound = (record: string | Uint8Array) => (typeof record === "string" ? record.length * 3 : record.byteLength);
/**
 * Text deltas are most of a stream: their one string is looked at, not the whole event walked. A value no
 * walk can finish (circular, or nested past the stack) is left to the encoder, which refuses it as usual.
 */
const carriesLargeString = (event: AGUIEvent): boolean => {
  if (event.type === EventType.TEXT_MESSAGE_CONTENT) return event.delta.length >= LARGE_JSON_CHARS;
  try {
    return holdsLongString(event);
  } catch {
    return false;
  }
};

const byteLength = (chunk: string | Uint8Array) => (typeof chunk === "string" ? Buffer.byteLength(chunk) : chunk.byteLength);

/** The records of one write: joined as text, or as bytes (an encoding gives one kind or the other). */
function joinRecords(records: ReadonlyArray<string | Uint8Array>): string | Uint8Array {
  if (records.length === 1) return records[0]!;
  if (records.every((record) => typeof record === "string")) return records.join("");
  return Buffer.concat(records.map((record) => (typeof record === "string" ? Buffer.from(record) : record)));
}

export interface SseSinkOptions {
  /** How events go on the wire, as the request negotiated it (`negotiateEncoding`). Default SSE. */
  encoding?: EventEncoding;
  /** Unsent bytes above which the stream stops reading its kernel. Default `DEFAULT_HIGH_WATER_MARK`. */
  highWaterMark?: number;
  /** The gate the stream's kernel reads go through: closed above the mark, opened on `drain`. */
  gate?: FlowGate;
  /** How long a client may take nothing while bytes wait for it before it counts as gone. Default `DEFAULT_STALL_MS`. */
  stallMs?: number;
  /** Told when a client is dropped for taking nothing, with the bytes it left unsent. */
  onSlowClient?: (unsentBytes: number) => void;
  /** Tests and diagnostics: after each write and each `drain`, the unsent bytes and whether the kernel is read. */
  onPressure?: (unsentBytes: number, readingKernel: boolean) => void;
  /** Metrics (`metrics/service-metrics.ts`): told when the stream opens; what it answers is told how it ended, once. */
  track?: () => (end: "completed" | "left" | "stalled") => void;
}

/** The part of an Express response the sink uses. */
export type SseResponse = Pick<
  Response,
  | "writeHead"
  | "vary"
  | "getHeaderNames"
  | "flushHeaders"
  | "write"
  | "end"
  | "destroy"
  | "destroyed"
  | "on"
  | "writableLength"
  | "writableEnded"
> & { socket?: Response["socket"] };

/**
 * Bytes of the write in progress that the socket's handle still holds,
 * the operating system not having taken them yet. Node names no public
 * figure for it; its stream handle's `writeQueueSize` (libuv's) is it.
 */
function queuedInHandle(res: SseResponse): number {
  const handle = (res.socket as { _handle?: { writeQueueSize?: unknown } } | null | undefined)?._handle;
  return typeof handle?.writeQueueSize === "number" ? handle.writeQueueSize : 0;
}

/**
 * Node keeps the header block it built in `writeHead` on the response for the
 * stream's life (`headersSent` reads it), as it built it: a rope of some
 * thirty concatenations, about 0.9 KiB of each open stream's heap where the
 * same text, flat, is a fifth of it. Node reads it only as a whole (to send
 * it, and for whether it was), so an equal flat copy stands in for it: `join`
 * builds one flat string (a copy through a Buffer would come from Node's
 * shared pool, whose slabs the kernel requests' bodies keep alive).
 */
function flattenHeaderBlock(res: SseResponse): void {
  const response = res as { _header?: unknown };
  if (typeof response._header === "string") response._header = response._header.split("\r\n").join("\r\n");
}

export const encodeSseItem = (item: SseItem): string => (item === HEARTBEAT ? SSE_HEARTBEAT : encodeSseEvent(item));

/** The sink does not know the request's language; this last-resort message is in the default one. */
const encodingFailedRecord = (encoding: EventEncoding) =>
  encoding.encode({
    type: EventType.RUN_ERROR,
    code: "INTERNAL_ERROR",
    message: messageFor(new AguiError("INTERNAL_ERROR"), DEFAULT_LANGUAGE),
  });

export function pipeToSse(
  items$: Observable<SseItem>,
  res: SseResponse,
  onError: (error: unknown) => void,
  options: SseSinkOptions = {},
): void {
  // Its 'close' has come and gone: the run starts and is left at once, as on any disconnect.
  if (res.destroyed) {
    items$.subscribe({ error: onError }).unsubscribe();
    return;
  }
  // A stream's encoding is negotiated from its Accept (`negotiateEncoding`): a cache must not give one client's
  // to another. Added to what the answer varies by already (a page's Origin), which the headers below keep.
  // With no header set before, all go in `writeHead` alone: Node then keeps no table of them for the stream's life.
  const encoding = options.encoding ?? SSE_ENCODING;
  if (res.getHeaderNames().length === 0) res.writeHead(200, { ...encoding.headers, Vary: "Accept" });
  else res.vary("Accept").writeHead(200, encoding.headers);
  flattenHeaderBlock(res);
  new SseStream(items$, res, onError, options, encoding);
}

const flushStream = (stream: SseStream) => stream.flush();
const checkStreamStall = (stream: SseStream) => stream.checkStall();
const watchStreamAfterCork = (stream: SseStream) => stream.watchForStall(true);
const sendHeadersIfSilent = (stream: SseStream) => stream.sendHeadersIfSilent();

/**
 * One open stream's state and its ways of writing. One object with methods, not a scope of closures: a stream
 * that waits for its run holds this object and its fields, where some fifteen closures and their shared
 * context held about 1.2 KiB more of each idle stream's heap (`idle` bench). Timers and ticks get module-level
 * functions with the stream as their argument for the same reason. The stream is its own observer of the items (rxjs calls
 * `next`, `error` and `complete` as its methods).
 */
class SseStream {
  private readonly highWaterMark: number;
  private readonly stallMs: number;
  private readonly checkEveryMs: number;
  private readonly gate: FlowGate;
  private readonly onSlowClient: SseSinkOptions["onSlowClient"];
  private readonly onPressure: SseSinkOptions["onPressure"];
  private readonly ended: ReturnType<NonNullable<SseSinkOptions["track"]>> | undefined;
  private subscription: Subscription | undefined = undefined;
  private dropped = false;
  // The records of this tick, written as one chunk on the next (or once they reach FLUSH_AT_BYTES):
  // one kernel chunk often yields many events, and each write of a chunked response has its own framing.
  private pending: Array<string | Uint8Array> = [];
  private pendingBound = 0;
  // Bytes handed to res.write: less what the response still holds, what its client has taken.
  private written = 0;
  // While bytes wait, the response is looked at now and then; a client that took none for stallMs is dropped.
  private stallTimer: ReturnType<typeof setTimeout> | undefined = undefined;
  private progressAt = 0;
  private takenAtProgress = 0;
  private queuedAtLastCheck = 0;
  // The connection's name in the system's tables, once: what the system took shows there first (`system-send-queue.ts`).
  private connection: string | undefined | null = null;
  private inSystemAtLastCheck: number | undefined = undefined;
  private watchDue = false;
  // An SSE record with a string of a megabyte or more is written a slice at a time (see `writeInSlices`);
  // what comes after it waits here its turn, made only when needed.
  private writingLarge = false;
  private afterLarge: Array<() => void> | undefined = undefined;

  constructor(
    items$: Observable<SseItem>,
    private readonly res: SseResponse,
    private readonly onError: (error: unknown) => void,
    options: SseSinkOptions,
    private readonly encoding: EventEncoding,
  ) {
    this.highWaterMark = options.highWaterMark ?? DEFAULT_HIGH_WATER_MARK;
    this.stallMs = options.stallMs ?? DEFAULT_STALL_MS;
    this.checkEveryMs = Math.max(1, Math.min(STALL_CHECK_MS, Math.floor(this.stallMs / 4)));
    this.gate = options.gate ?? new FlowGate();
    this.onSlowClient = options.onSlowClient;
    this.onPressure = options.onPressure;
    this.ended = options.track?.();
    const subscription = items$.subscribe(this);
    this.subscription = subscription;
    // The run ended while it was still subscribing (an encoding failure in a synchronous burst).
    if (this.dropped) subscription.unsubscribe();
    // A run's RUN_STARTED is written on the next tick (see `flush`), and the headers go in the same write: one
    // system call and one segment for both. A stream with nothing to say yet still sends its headers at once.
    process.nextTick(sendHeadersIfSilent, this);
    res.on("drain", () => this.onDrain());
    res.on("close", () => this.onClose());
  }

  sendHeadersIfSilent(): void {
    // An ended response sent its headers with its end.
    if (!this.dropped && !this.res.writableEnded && this.written === 0) this.res.flushHeaders();
  }

  next(item: SseItem): void {
    if (this.dropped) return;
    if (this.writingLarge) return void this.waitForLarge(() => this.next(item));
    const encoding = this.encoding;
    if (item !== HEARTBEAT && encoding === SSE_ENCODING && carriesLargeString(item)) return this.writeInSlices(item);
    let record: string | Uint8Array;
    if (item === HEARTBEAT) {
      if (encoding.heartbeat === undefined) return;
      record = encoding.heartbeat;
    } else {
      try {
        record = encoding.encode(item);
      } catch (error) {
        return this.failEncoding(error);
      }
    }
    if (this.pending.length === 0) process.nextTick(flushStream, this);
    this.pending.push(record);
    this.pendingBound += sizeBound(record);
    if (this.pendingBound >= FLUSH_AT_BYTES) this.flush();
  }

  error(error: unknown): void {
    if (this.writingLarge) return void this.waitForLarge(() => this.error(error));
    // The pipeline turns every failure into RUN_ERROR; reaching here is a bug, not a run outcome. What was
    // written still goes out, and the response ends as on completion.
    this.onError(error);
    this.complete();
  }

  complete(): void {
    if (this.writingLarge) return void this.waitForLarge(() => this.complete());
    this.flush();
    this.ended?.("completed");
    if (!this.dropped) this.res.end();
  }

  flush(): void {
    if (this.dropped || this.pending.length === 0) return;
    const chunk = joinRecords(this.pending);
    this.pending = [];
    this.pendingBound = 0;
    this.written += byteLength(chunk);
    this.res.write(chunk);
    this.afterWrite();
  }

  /** After a record went to the response: the kernel waits above the mark, and unsent bytes are watched. */
  private afterWrite(): void {
    const unsent = this.res.writableLength;
    if (unsent > this.highWaterMark) this.gate.pause();
    if (unsent > 0) this.watchForStall();
    this.reportPressure();
  }

  private onDrain(): void {
    if (this.res.writableLength <= this.highWaterMark) this.gate.resume();
    this.reportPressure();
  }

  private onClose(): void {
    // After an end told above, this one is not told again: a stream still going when its connection closed lost its client.
    this.ended?.("left");
    this.stop();
    this.subscription!.unsubscribe();
  }

  private taken(): number {
    return this.written - this.res.writableLength;
  }

  private reportPressure(): void {
    this.onPressure?.(this.res.writableLength, this.gate.isOpen);
  }

  private inSystem(): number | undefined {
    if (this.connection === null) this.connection = this.res.socket ? connectionKey(this.res.socket) : undefined;
    return this.connection === undefined ? undefined : systemSendQueue(this.connection);
  }

  /**
   * The client's system acknowledged more than was written since the last check that asked: a slow reader,
   * reading, below what wakes the socket. Asked only when nothing else showed progress, since a reading is a
   * parse of every connection of the host: a client that keeps up never costs one.
   */
  private systemTook(): boolean {
    const unacknowledged = this.inSystem();
    const took = unacknowledged !== undefined && this.inSystemAtLastCheck !== undefined && unacknowledged < this.inSystemAtLastCheck;
    this.inSystemAtLastCheck = unacknowledged;
    return took;
  }

  /**
   * Node corks a chunked response's socket for each write until the end of the tick, so a write's bytes show as
   * unsent until then, though the socket takes them at once from a client that keeps up. Such bytes are looked at
   * again a tick later, and a timer is armed only if they still wait: one a write, each living a second, outlived
   * the young generation's collections and died in the old one (every stream's heartbeats made one each).
   */
  watchForStall(aTickLater = false): void {
    if (this.stallTimer !== undefined) return;
    if (aTickLater) {
      this.watchDue = false;
      if (this.dropped || this.res.writableLength === 0) return;
    } else if (this.watchDue) return;
    else if (this.res.socket?.writableCorked) {
      this.watchDue = true;
      return void process.nextTick(watchStreamAfterCork, this);
    }
    this.progressAt = Date.now();
    this.takenAtProgress = this.taken();
    this.queuedAtLastCheck = queuedInHandle(this.res);
    this.inSystemAtLastCheck = undefined;
    this.armStallCheck();
  }

  private armStallCheck(): void {
    // Unref'd: watching a client must not keep the process alive.
    this.stallTimer = setTimeout(checkStreamStall, this.checkEveryMs, this).unref();
  }

  checkStall(): void {
    this.stallTimer = undefined;
    if (this.dropped) return;
    const unsent = this.res.writableLength;
    // 'drain' opens the gate; this covers a response that never asked for one.
    if (unsent <= this.highWaterMark && !this.gate.isOpen) {
      this.gate.resume();
      this.reportPressure();
    }
    if (unsent === 0) return;
    // A write finished, or the system took more of the one in progress (its queue only grows by a new write,
    // which needs the one before it finished).
    const queued = queuedInHandle(this.res);
    const tookPart = queued < this.queuedAtLastCheck;
    this.queuedAtLastCheck = queued;
    if (this.taken() > this.takenAtProgress || tookPart) {
      this.takenAtProgress = this.taken();
      this.progressAt = Date.now();
      // What the system held before this progress says nothing of the next check.
      this.inSystemAtLastCheck = undefined;
    } else if (this.systemTook()) {
      this.progressAt = Date.now();
    } else if (Date.now() - this.progressAt >= this.stallMs) {
      return this.dropStalledClient(unsent);
    }
    this.armStallCheck();
  }

  private stop(): void {
    this.dropped = true;
    this.pending = [];
    this.pendingBound = 0;
    clearTimeout(this.stallTimer);
    this.stallTimer = undefined;
    // Nothing may wait at the gate of a stream that is over.
    this.gate.resume();
  }

  private dropStalledClient(unsent: number): void {
    this.ended?.("stalled");
    this.stop();
    this.onSlowClient?.(unsent);
    // Unsubscribing first: the run sees a client that left, before any other event of this connection.
    this.subscription?.unsubscribe();
    this.res.destroy();
  }

  // An item JSON.stringify refuses (a bug upstream: kernel answers are depth-checked as they are read) must not
  // throw out of the sink, where rxjs would make it an uncaught exception: the run ends with RUN_ERROR after what
  // was sent, and is unsubscribed as if its client had left, which cancels its task.
  private failEncoding(error: unknown): void {
    this.ended?.("completed");
    this.onError(error);
    this.pending.push(encodingFailedRecord(this.encoding));
    this.flush();
    this.stop();
    this.subscription?.unsubscribe();
    this.res.end();
  }

  private waitForLarge(then: () => void): void {
    (this.afterLarge ??= []).push(then);
  }

  // An SSE record with a string of a megabyte or more is written a slice at a time, the loop let go between
  // slices: one JSON.stringify of a 15 MiB tool result held every stream of the process for tens of
  // milliseconds. What comes after it waits its turn, and the kernel's reads wait on the gate.
  private writeInSlices(event: AGUIEvent): void {
    let pieces: Generator<string, void, undefined>;
    let first: IteratorResult<string, void>;
    try {
      pieces = jsonPieces(event);
      first = pieces.next();
    } catch (error) {
      return this.failEncoding(error);
    }
    this.flush();
    this.writingLarge = true;
    void this.gate.hold(this.sendSlices(pieces, first)).then(() => {
      this.writingLarge = false;
      const afterLarge = this.afterLarge;
      while (!this.writingLarge && afterLarge !== undefined && afterLarge.length > 0) afterLarge.shift()!();
    });
  }

  private async sendSlices(pieces: Generator<string, void, undefined>, first: IteratorResult<string, void>): Promise<void> {
    this.send("data: ");
    for (let piece = first; !piece.done; piece = pieces.next()) {
      if (this.dropped) return;
      this.send(piece.value);
      await nextTurn();
    }
    if (this.dropped) return;
    this.send("\n\n");
    this.afterWrite();
  }

  private send(piece: string): void {
    this.written += Buffer.byteLength(piece);
    this.res.write(piece);
  }
}
