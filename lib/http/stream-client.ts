/**
 * An HTTP request as the run lifecycle sees its client (`runs/runs.ts`
 * `RunClient`), and the one way a route sends a run's or an observer's
 * events back: the SSE sink (or protobuf, as negotiated), reading the
 * kernel only as fast as the client reads (`runs/flow-gate.ts`), and
 * dropping a client that takes nothing for `clientStallS`.
 */
import type { Request, Response } from "express";
import type { Observable } from "rxjs";
import { errorFields } from "../log.js";
import type { SseItem } from "../run-pipeline.js";
import { FlowGate } from "../runs/flow-gate.js";
import type { RunClient } from "../runs/runs.js";
import { negotiateEncoding } from "./event-encoding.js";
import { noteRequestIds, requestLog, requestLogWithIds } from "./request-log.js";
import { requestLanguage } from "./request-language.js";
import { pipeToSse, type SseSinkOptions } from "./sse-sink.js";

/** The request's client; with `gate`, the stream it is sent reads the kernel at its pace. */
export function httpRunClient(req: Request, res: Response, gate?: FlowGate): RunClient {
  // Told by one listener of the response's `close`, not one each: a run's stream keeps them all while it lasts.
  // Copied at each change, not pushed onto: a pushed array keeps room for 16 more, and a stream mostly holds one or two.
  let closeListeners: ReadonlyArray<(finished: boolean) => void> | undefined;
  return {
    language: requestLanguage(req),
    log: requestLog(res),
    noteIds: (ids) => noteRequestIds(res, ids),
    ...(gate ? { gate } : {}),
    onClose(listener) {
      if (res.closed) return listener(res.writableFinished);
      // `on`, not `once` (`close` comes once): a once wrapper, bound and with its own state, lives as long as the stream.
      if (closeListeners === undefined) {
        res.on("close", () => {
          for (const each of closeListeners ?? []) each(res.writableFinished);
        });
      }
      closeListeners = (closeListeners ?? []).concat(listener);
    },
  };
}

/** What streams of one kind share: the sink's settings, and how a dropped client is named in the log. */
export interface StreamSettings {
  clientStallS: number;
  sse: Pick<SseSinkOptions, "highWaterMark" | "onPressure" | "track">;
  /** Whose stream it is, for the records of a failure or a dropped client. */
  who: "run" | "observer";
}

/** Sends `events$` to the client of `req`, through `gate` (the one its `RunClient` was given). */
export function streamToClient(
  events$: Observable<SseItem>,
  req: Request,
  res: Response,
  gate: FlowGate,
  { clientStallS, sse, who }: StreamSettings,
): void {
  // Made when a record is written, not per stream (a logger child costs about a KiB a stream while it lasts), and
  // then with the ids the run or observer turned out to be about, noted while it started.
  const log = () => requestLogWithIds(res);
  // A bug: the sink ends the stream with RUN_ERROR INTERNAL_ERROR, or cannot end it at all.
  const failedOutside = (error: unknown) =>
    log().error({ ...errorFields(error), code: "INTERNAL_ERROR" }, `the ${who} failed outside its pipeline`);
  // Express keeps its router's `next` on the request for as long as the request lives, and with it the state of
  // every router it went through (about 1 KiB): nothing calls it once the stream started, and a stream lives long.
  req.next = undefined;
  // So with what routing parsed of the URL and the route's parameters (about 0.3 KiB), read by now if at all.
  dropRoutingState(req);
  pipeToSse(events$, res, failedOutside, {
    ...sse,
    encoding: negotiateEncoding(req),
    gate,
    stallMs: clientStallS * 1000,
    onSlowClient: (unsent) =>
      log().info({ unsentBytes: unsent }, `dropped the ${who}'s client, which took nothing for ${clientStallS} s, as if it had left`),
  });
}

/** What Express's router leaves on a request: its parameters, and the URL as parsed (`parseurl` parses it again if asked). */
function dropRoutingState(req: Request): void {
  const routed = req as unknown as { params?: unknown; _parsedUrl?: unknown };
  routed.params = undefined;
  routed._parsedUrl = undefined;
}
