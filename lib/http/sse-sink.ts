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
  const highWaterMark = options.highWaterMark ?? DEFAULT_HIGH_WATER_MARK;
  const stallMs = options.stallMs ?? DEFAULT_STALL_MS;
  const gate = options.gate ?? new FlowGate();
  const encoding = options.encoding ?? SSE_ENCODING;
  // Its 'close' has come and gone: the run starts and is left at once, as on any disconnect.
  if (res.destroyed) {
    items$.subscribe({ error: onError }).unsubscribe();
    return;
  }
  // A stream's encoding is negotiated from its Accept (`negotiateEncoding`): a cache must not give one client's
  // to another. Added to what the answer varies by already (a page's Origin), which the headers below keep.
  // With no header set before, all go in `writeHead` alone: Node then keeps no table of them for the stream's life.
  if (res.getHeaderNames().length === 0) res.writeHead(200, { ...encoding.headers, Vary: "Accept" });
  else res.vary("Accept").writeHead(200, encoding.headers);
  flattenHeaderBlock(res);
  const ended = options.track?.();
  let subscription: Subscription | undefined;
  let dropped = false;
  // The records of this tick, written as one chunk on the next (or once they reach FLUSH_AT_BYTES):
  // one kernel chunk often yields many events, and each write of a chunked response has its own framing.
  let pending: Array<string | Uint8Array> = [];
  let pendingBound = 0;
  // Bytes handed to res.write: less what the response still holds, what its client has taken.
  let written = 0;
  const taken = () => written - res.writableLength;
  const reportPressure = () => options.onPressure?.(res.writableLength, gate.isOpen);

  // While bytes wait, the response is looked at now and then; a client that took none for stallMs is dropped.
  let stallTimer: ReturnType<typeof setTimeout> | undefined;
  let progressAt = 0;
  let takenAtProgress = 0;
  let queuedAtLastCheck = 0;
  // The connection's name in the system's tables, once: what the system took shows there first (`system-send-queue.ts`).
  let connection: string | undefined | null = null;
  const inSystem = () => {
    if (connection === null) connection = res.socket ? connectionKey(res.socket) : undefined;
    return connection === undefined ? undefined : systemSendQueue(connection);
  };
  let inSystemAtLastCheck: number | undefined;
  /**
   * The client's system acknowledged more than was written since the last check that asked: a slow reader,
   * reading, below what wakes the socket. Asked only when nothing else showed progress, since a reading is a
   * parse of every connection of the host: a client that keeps up never costs one.
   */
  const systemTook = () => {
    const unacknowledged = inSystem();
    const took = unacknowledged !== undefined && inSystemAtLastCheck !== undefined && unacknowledged < inSystemAtLastCheck;
    inSystemAtLastCheck = unacknowledged;
    return took;
  };
  const checkEveryMs = Math.max(1, Math.min(STALL_CHECK_MS, Math.floor(stallMs / 4)));
  // Node corks a chunked response's socket for each write until the end of the tick, so a write's bytes show as
  // unsent until then, though the socket takes them at once from a client that keeps up. Such bytes are looked at
  // again a tick later, and a timer is armed only if they still wait: one a write, each living a second, outlived
  // the young generation's collections and died in the old one (every stream's heartbeats made one each).
  let watchDue = false;
  const watchForStall = (aTickLater = false) => {
    if (stallTimer !== undefined) return;
    if (aTickLater) {
      watchDue = false;
      if (dropped || res.writableLength === 0) return;
    } else if (watchDue) return;
    else if (res.socket?.writableCorked) {
      watchDue = true;
      return void process.nextTick(watchForStall, true);
    }
    progressAt = Date.now();
    takenAtProgress = taken();
    queuedAtLastCheck = queuedInHandle(res);
    inSystemAtLastCheck = undefined;
    armStallCheck();
  };
  // Unref'd: watching a client must not keep the process alive.
  const armStallCheck = () => (stallTimer = setTimeout(checkStall, checkEveryMs)).unref();
  const checkStall = () => {
    stallTimer = undefined;
    if (dropped) return;
    const unsent = res.writableLength;
    // 'drain' opens the gate; this covers a response that never asked for one.
    if (unsent <= highWaterMark && !gate.isOpen) {
      gate.resume();
      reportPressure();
    }
    if (unsent === 0) return;
    // A write finished, or the system took more of the one in progress (its queue only grows by a new write,
    // which needs the one before it finished).
    const queued = queuedInHandle(res);
    const tookPart = queued < queuedAtLastCheck;
    queuedAtLastCheck = queued;
    if (taken() > takenAtProgress || tookPart) {
      takenAtProgress = taken();
      progressAt = Date.now();
      // What the system held before this progress says nothing of the next check.
      inSystemAtLastCheck = undefined;
    } else if (systemTook()) {
      progressAt = Date.now();
    } else if (Date.now() - progressAt >= stallMs) {
      return dropStalledClient(unsent);
    }
    armStallCheck();
  };

  const flush = () => {
    if (dropped || pending.length === 0) return;
    const chunk = joinRecords(pending);
    pending = [];
    pendingBound = 0;
    written += byteLength(chunk);
    res.write(chunk);
    const unsent = res.writableLength;
    if (unsent > highWaterMark) gate.pause();
    if (unsent > 0) watchForStall();
    reportPressure();
  };
  const stop = () => {
    dropped = true;
    pending = [];
    pendingBound = 0;
    clearTimeout(stallTimer);
    stallTimer = undefined;
    // Nothing may wait at the gate of a stream that is over.
    gate.resume();
  };
  const dropStalledClient = (unsent: number) => {
    ended?.("stalled");
    stop();
    options.onSlowClient?.(unsent);
    // Unsubscribing first: the run sees a client that left, before any other event of this connection.
    subscription?.unsubscribe();
    res.destroy();
  };
  // An item JSON.stringify refuses (a bug upstream: kernel answers are depth-checked as they are read) must not
  // throw out of the sink, where rxjs would make it an uncaught exception: the run ends with RUN_ERROR after what
  // was sent, and is unsubscribed as if its client had left, which cancels its task.
  const failEncoding = (error: unknown) => {
    ended?.("completed");
    onError(error);
    pending.push(encodingFailedRecord(encoding));
    flush();
    stop();
    subscription?.unsubscribe();
    res.end();
  };
  // An SSE record with a string of a megabyte or more is written a slice at a time, the loop let go between
  // slices: one JSON.stringify of a 15 MiB tool result held every stream of the process for tens of
  // milliseconds. What comes after it waits its turn, and the kernel's reads wait on the gate.
  let writingLarge = false;
  const afterLarge: Array<() => void> = [];
  const writeInSlices = (event: AGUIEvent) => {
    let pieces: Generator<string, void, undefined>;
    let first: IteratorResult<string, void>;
    try {
      pieces = jsonPieces(event);
      first = pieces.next();
    } catch (error) {
      return failEncoding(error);
    }
    flush();
    writingLarge = true;
    const send = (piece: string) => {
      written += Buffer.byteLength(piece);
      res.write(piece);
    };
    const slices = async () => {
      send("data: ");
      for (let piece = first; !piece.done; piece = pieces.next()) {
        if (dropped) return;
        send(piece.value);
        await nextTurn();
      }
      if (dropped) return;
      send("\n\n");
      if (res.writableLength > highWaterMark) gate.pause();
      if (res.writableLength > 0) watchForStall();
      reportPressure();
    };
    void gate.hold(slices()).then(() => {
      writingLarge = false;
      while (!writingLarge && afterLarge.length > 0) afterLarge.shift()!();
    });
  };
  subscription = items$.subscribe({
    next: function onItem(item) {
      if (dropped) return;
      if (writingLarge) return void afterLarge.push(() => onItem(item));
      if (item !== HEARTBEAT && encoding === SSE_ENCODING && carriesLargeString(item)) return writeInSlices(item);
      let record: string | Uint8Array;
      if (item === HEARTBEAT) {
        if (encoding.heartbeat === undefined) return;
        record = encoding.heartbeat;
      } else {
        try {
          record = encoding.encode(item);
        } catch (error) {
          return failEncoding(error);
        }
      }
      if (pending.length === 0) process.nextTick(flush);
      pending.push(record);
      pendingBound += sizeBound(record);
      if (pendingBound >= FLUSH_AT_BYTES) flush();
    },
    error: function onFailure(error: unknown) {
      if (writingLarge) return void afterLarge.push(() => onFailure(error));
      // The pipeline turns every failure into RUN_ERROR; reaching here is a bug, not a run outcome.
      onError(error);
      flush();
      ended?.("completed");
      if (!dropped) res.end();
    },
    complete: function onComplete() {
      if (writingLarge) return void afterLarge.push(onComplete);
      flush();
      ended?.("completed");
      if (!dropped) res.end();
    },
  });
  // The run ended while it was still subscribing (an encoding failure in a synchronous burst).
  if (dropped) subscription.unsubscribe();
  // A run's RUN_STARTED is written on the next tick (see `flush`), and the headers go in the same write: one
  // system call and one segment for both. A stream with nothing to say yet still sends its headers at once.
  process.nextTick(() => {
    // An ended response sent its headers with its end.
    if (!dropped && !res.writableEnded && written === 0) res.flushHeaders();
  });
  res.on("drain", () => {
    if (res.writableLength <= highWaterMark) gate.resume();
    reportPressure();
  });
  res.on("close", () => {
    // After an end told above, this one is not told again: a stream still going when its connection closed lost its client.
    ended?.("left");
    stop();
    subscription.unsubscribe();
  });
}
