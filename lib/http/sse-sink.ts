/**
 * The Express end of a run: writes each AG-UI event as one `data: <json>`
 * record and each heartbeat as the comment `: heartbeat`, LF-only framing
 * (the AG-UI client's parser breaks on CRLF). A client that goes away
 * unsubscribes the run, which cancels the upstream task (see `onAbandon`).
 *
 * Backpressure: a run cannot slow its kernel down (the A2A stream has no
 * flow control the pipeline could use), so what a client does not read
 * piles up in the response's buffer. Before each write the sink looks at
 * that backlog (`res.writableLength`, the bytes Node holds that the socket
 * has not taken); past `maxBacklogBytes` the client counts as gone: the
 * connection is destroyed and the run unsubscribed, exactly as on a
 * disconnect, so its A2A task is cancelled.
 *
 * The records of one tick go out as one write on the next tick, or as soon
 * as they pass 64 KiB: one kernel chunk often yields many events, and each
 * write of a chunked response costs its own framing and socket buffer
 * (writing per event cost the service about a quarter of its CPU per event
 * in `npm run bench`). What a run can hold for its client is thus bounded
 * by the limit, plus 64 KiB, plus one event.
 */
import { EventType } from "@ag-ui/core";
import type { Response } from "express";
import type { Observable, Subscription } from "rxjs";
import { HEARTBEAT } from "../../operators/merge-heartbeat.js";
import { AguiError } from "../errors.js";
import { DEFAULT_LANGUAGE, messageFor } from "../i18n/index.js";
import type { SseItem } from "../run.js";

export const SSE_HEADERS = {
  "Content-Type": "text/event-stream; charset=utf-8",
  "Cache-Control": "no-cache, no-transform",
  Connection: "keep-alive",
  // Reverse proxies (nginx) would otherwise buffer the stream.
  "X-Accel-Buffering": "no",
} as const;

/**
 * 1 MiB: far more than a reading client ever leaves unsent (the socket
 * takes each write at once), and small enough that thousands of stuck
 * clients cannot exhaust the process.
 */
export const DEFAULT_MAX_BACKLOG_BYTES = 1024 * 1024;

/**
 * Records of one tick are written together, but at most 64 KiB at once:
 * counted in UTF-16 units (no byte count per event), each of which is at
 * most 3 bytes of UTF-8.
 */
const FLUSH_AT_LENGTH = Math.floor((64 * 1024) / 3);

export interface SseSinkOptions {
  /** Unsent bytes a response may hold before its client is dropped. Default `DEFAULT_MAX_BACKLOG_BYTES`. */
  maxBacklogBytes?: number;
  /** Told when a client is dropped for not reading, with the backlog it had. */
  onSlowClient?: (backlogBytes: number) => void;
}

/** The part of an Express response the sink uses. */
export type SseResponse = Pick<Response, "writeHead" | "flushHeaders" | "write" | "end" | "destroy" | "on" | "writableLength">;

export const encodeSseItem = (item: SseItem): string => (item === HEARTBEAT ? ": heartbeat\n\n" : `data: ${JSON.stringify(item)}\n\n`);

/** The sink does not know the request's language; this last-resort message is in the default one. */
const encodingFailedRecord = () =>
  encodeSseItem({
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
  const maxBacklogBytes = options.maxBacklogBytes ?? DEFAULT_MAX_BACKLOG_BYTES;
  res.writeHead(200, SSE_HEADERS);
  res.flushHeaders();
  let subscription: Subscription | undefined;
  let dropped = false;
  // The records of this tick, written as one chunk on the next (or once they reach FLUSH_AT_LENGTH):
  // one kernel chunk often yields many events, and each write of a chunked response has its own framing.
  let pending = "";
  const flush = () => {
    if (dropped || pending === "") return;
    res.write(pending);
    pending = "";
  };
  const dropClient = () => {
    dropped = true;
    options.onSlowClient?.(res.writableLength);
    pending = "";
    // Unsubscribing first: the run sees a client that left, before any other event of this connection.
    subscription?.unsubscribe();
    res.destroy();
  };
  // An item JSON.stringify refuses (a bug upstream: kernel answers are depth-checked as they are read) must not
  // throw out of the sink, where rxjs would make it an uncaught exception: the run ends with RUN_ERROR after what
  // was sent, and is unsubscribed as if its client had left, which cancels its task.
  const failEncoding = (error: unknown) => {
    onError(error);
    pending += encodingFailedRecord();
    flush();
    dropped = true;
    subscription?.unsubscribe();
    res.end();
  };
  subscription = items$.subscribe({
    next: (item) => {
      if (dropped) return;
      if (res.writableLength > maxBacklogBytes) return dropClient();
      let record: string;
      try {
        record = encodeSseItem(item);
      } catch (error) {
        return failEncoding(error);
      }
      if (pending === "") process.nextTick(flush);
      pending += record;
      if (pending.length >= FLUSH_AT_LENGTH) flush();
    },
    error: (error: unknown) => {
      // The pipeline turns every failure into RUN_ERROR; reaching here is a bug, not a run outcome.
      onError(error);
      flush();
      if (!dropped) res.end();
    },
    complete: () => {
      flush();
      if (!dropped) res.end();
    },
  });
  // A backlog reached while the run was still subscribing (a synchronous burst).
  if (dropped) subscription.unsubscribe();
  res.on("close", () => subscription.unsubscribe());
}
