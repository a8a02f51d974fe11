/**
 * The HTTP edge's share of the log (see `log.ts`). Each request gets a
 * child logger with its method and path — never its body, headers or query
 * string — that the routes hand on to what they start. A client that closes
 * its connection before its answer ended is told at `debug`: leaving is a
 * client's right, not a failure. Every error answer is logged once, here:
 * a refusal (4xx) at `info` with its code, a failure (5xx) at `warn` with
 * its code and the error behind it (`error` for INTERNAL_ERROR).
 */
import type { RequestHandler, Response } from "express";
import type { AguiError } from "../errors.js";
import { lazyChild, levelForCode, silentLogger, type Logger } from "../log.js";
import { httpStatusOf } from "./http-status.js";
import { noteSpanIds } from "./request-span.js";

/** Paths are the service's own, but a client may send any: a long one is cut. */
const MAX_LOGGED_PATH = 200;

const LOG = "iacCodeAguiLog";
const IDS = "iacCodeAguiLogIds";

export function requestLogging(log: Logger): RequestHandler {
  return (req, res, next) => {
    // Made when a record is written: a run's request lives as long as its stream, and most write none.
    res.locals[LOG] = lazyChild(log, { method: req.method, path: req.path.slice(0, MAX_LOGGED_PATH) });
    // One function for every response (`close` comes once): a closure per request would live as long as its stream.
    res.on("close", logEarlyClose);
    next();
  };
}

function logEarlyClose(this: Response): void {
  if (!this.writableFinished) requestLog(this).debug(idsOf(this), "the client closed the connection before its answer ended");
}

/** The request's logger: method and path bound. */
export const requestLog = (res: Response): Logger => (res.locals[LOG] as Logger | undefined) ?? silentLogger;

/** The request's logger with the ids it turned out to be about bound too: for records of its stream's end. */
export const requestLogWithIds = (res: Response): Logger => requestLog(res).child(idsOf(res));

/** Ids the request turned out to be about (a thread, a run), for the records the edge itself writes, and for its span. */
export function noteRequestIds(res: Response, ids: Record<string, string>): void {
  res.locals[IDS] = { ...idsOf(res), ...ids };
  noteSpanIds(res, ids);
}

const idsOf = (res: Response): Record<string, string> => (res.locals[IDS] as Record<string, string> | undefined) ?? {};

/** A body cut off by its client (body-parser's `request.aborted`): the client left, nothing failed. */
const isAbort = (error: AguiError) => (error.cause as { type?: unknown } | undefined)?.type === "request.aborted";

/** Logs an error answer once (see the file comment); `error` is what was thrown, `agui` the answer made of it. */
export function logErrorAnswer(res: Response, error: unknown, agui: AguiError): void {
  const log = requestLog(res);
  const status = httpStatusOf(agui.code);
  const fields = { ...idsOf(res), code: agui.code, status };
  // Nobody reads this answer: the close record says the client left.
  if (res.destroyed || isAbort(agui)) return;
  if (status < 500) return log.info(fields, `refused with ${status} ${agui.code}`);
  log[levelForCode(agui.code)]({ ...fields, err: error }, `answered ${status} ${agui.code}`);
}
