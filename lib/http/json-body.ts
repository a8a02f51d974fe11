/**
 * JSON request bodies: `application/json` only (415 otherwise), a size cap
 * (413), malformed JSON answered as 400 `INVALID_JSON`, a body that is not
 * what its `Content-Encoding` says as 400 `INVALID_INPUT`, and a deadline
 * for the whole body (408) — each as the documented error code rather than
 * Express's default HTML page.
 */
import express, { type ErrorRequestHandler, type Request, type RequestHandler, type Response } from "express";
import { AguiError } from "../errors.js";
import { detailParams } from "../i18n/detail.js";

export const MAX_RUN_BODY_BYTES = 12 * 1024 * 1024;
export const MAX_CONTROL_BODY_BYTES = 64 * 1024;

const requireJson: RequestHandler = (req, _res, next) => {
  next(req.is("application/json") ? undefined : new AguiError("UNSUPPORTED_MEDIA_TYPE"));
};

/** zlib's codes for input it cannot inflate (`Z_DATA_ERROR`, `Z_BUF_ERROR`, …; brotli's `ERR__ERROR_FORMAT_…`). */
const isDecodingError = (error: { code?: unknown }) => typeof error.code === "string" && /^(Z_|ERR__ERROR_FORMAT)/.test(error.code);

/** body-parser reports its failures by `type` (zlib's by their `code`); map them onto our codes. */
const bodyErrors: ErrorRequestHandler = (error: { type?: string; code?: unknown }, _req, _res, next) => {
  if (isDecodingError(error)) {
    return next(new AguiError("INVALID_INPUT", { reason: "contentEncoding", ...detailParams("/", "contentEncoding") }, { cause: error }));
  }
  switch (error.type) {
    case "entity.too.large":
      return next(new AguiError("REQUEST_TOO_LARGE", {}, { cause: error }));
    case "entity.parse.failed":
      return next(new AguiError("INVALID_JSON", {}, { cause: error }));
    // The client left, or `bodyDeadline` closed the connection: nobody reads this answer, but it is no internal error.
    case "request.aborted":
      return next(new AguiError("INVALID_INPUT", detailParams("/", "bodyCutOff"), { cause: error }));
    case "charset.unsupported":
    case "encoding.unsupported":
      return next(new AguiError("UNSUPPORTED_MEDIA_TYPE", {}, { cause: error }));
    default:
      return next(error);
  }
};

export function jsonBody(limitBytes: number): Array<RequestHandler | ErrorRequestHandler> {
  return [requireJson, express.json({ limit: limitBytes, strict: false, type: () => true }), bodyErrors];
}

/**
 * A deadline for the whole request body, from the end of the headers (which
 * Node bounds itself): a client that sends a byte now and then would
 * otherwise hold its connection, and its place among the connections, for
 * as long as it likes. Past it, `reply` answers 408 `REQUEST_TIMEOUT` and
 * the connection is closed.
 */
export function bodyDeadline(timeoutMs: number, reply: (req: Request, res: Response, error: AguiError) => void): RequestHandler {
  return (req, res, next) => {
    const timer = setTimeout(() => {
      if (req.complete) return;
      if (res.headersSent) {
        req.socket.destroy();
        return;
      }
      res.set("Connection", "close");
      res.once("finish", () => req.socket.destroy());
      reply(req, res, new AguiError("REQUEST_TIMEOUT"));
    }, timeoutMs);
    // A response under way or sent ends the deadline's purpose, whether or not the body was read.
    const stop = () => clearTimeout(timer);
    req.once("end", stop);
    res.once("finish", stop);
    res.once("close", stop);
    next();
  };
}
