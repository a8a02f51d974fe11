/**
 * JSON request bodies: `application/json` only (415 otherwise), a size cap
 * (413), malformed JSON answered as 400 `INVALID_JSON`, a body that is not
 * what its `Content-Encoding` says as 400 `INVALID_INPUT`, and a deadline
 * for the whole body (408) — each as the documented error code rather than
 * Express's default HTML page.
 *
 * What JSON.parse costs is its values, not its bytes: five megabytes of
 * `"x",` are a million values, and the event loop every run shares stood
 * still for a quarter of a second building them, only for the parse to
 * fail on the last byte. So before the parse, a scan that jumps over
 * strings counts the body's values (`MAX_JSON_VALUES`): a body with more
 * is `REQUEST_TOO_LARGE` before anything is built. A body of large strings
 * (images in base64) is scanned in a few jumps.
 */
import express, { type ErrorRequestHandler, type Request, type RequestHandler, type Response } from "express";
import { AguiError } from "../errors.js";
import { detailParams } from "../i18n/detail.js";

export const MAX_RUN_BODY_BYTES = 12 * 1024 * 1024;
export const MAX_CONTROL_BODY_BYTES = 64 * 1024;
/**
 * Containers, members and elements a body may hold: a conversation of a
 * thousand messages with tools and state is a few tens of thousands; a
 * hundred thousand parse in about 20 ms.
 */
export const MAX_JSON_VALUES = 100_000;

const BACKSLASH = 0x5c;
/** What a byte outside a string is to the count: 1 starts a value or member (`,` `:` `[` `{`), 2 opens a string. */
const OPENS_STRING = 2;
const BYTE_CLASS = new Uint8Array(256);
for (const char of ",:[{") BYTE_CLASS[char.charCodeAt(0)] = 1;
BYTE_CLASS[0x22] = OPENS_STRING;

/**
 * Whether `body` has at most `limit` of those bytes anywhere, strings included: found by `indexOf` (native code), so
 * a body of whitespace or of base64 is passed in a few milliseconds, which a byte-by-byte loop would not do.
 */
function fewStartingBytes(body: Buffer, limit: number): boolean {
  let found = 0;
  for (const char of ",:[{") {
    const byte = char.charCodeAt(0);
    for (let at = body.indexOf(byte); at >= 0; at = body.indexOf(byte, at + 1)) if (++found > limit) return false;
  }
  return true;
}

/** Whether `body` (JSON text in UTF-8) holds more than `limit` values, strings jumped over whole. */
export function holdsMoreValuesThan(body: Buffer, limit: number): boolean {
  if (fewStartingBytes(body, limit)) return false;
  let values = 0;
  for (let at = 0; at < body.length; at++) {
    const byteClass = BYTE_CLASS[body[at]!]!;
    if (byteClass === 0) continue;
    if (byteClass === OPENS_STRING) {
      // To the quote that ends the string: one preceded by an even number of backslashes.
      for (;;) {
        at = body.indexOf(0x22, at + 1);
        if (at < 0) return false;
        let backslashes = 0;
        while (body[at - 1 - backslashes] === BACKSLASH) backslashes++;
        if (backslashes % 2 === 0) break;
      }
    } else if (++values > limit) return true;
  }
  return false;
}

/** body-parser's `verify`: runs on the raw body before JSON.parse; what it throws comes back as `entity.verify.failed`. */
const countValues = (_req: unknown, _res: unknown, body: Buffer) => {
  if (holdsMoreValuesThan(body, MAX_JSON_VALUES)) throw new AguiError("REQUEST_TOO_LARGE", { reason: "tooManyValues" });
};

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
    case "entity.verify.failed":
      return next(error instanceof AguiError ? error : new AguiError("INVALID_JSON", {}, { cause: error }));
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
  return [requireJson, express.json({ limit: limitBytes, strict: false, type: () => true, verify: countValues }), bodyErrors];
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
    // A response under way or sent ends the deadline's purpose, whether or not the body was read. Its listeners go
    // with it: a run's response lives as long as its stream, and would keep them, the timer and this scope. Its
    // `close` alone (a response that finished closes a tick later): a listener added to `finish`, which holds
    // two already, grows the list for good (about 0.15 KiB of each stream's heap), even once it is removed.
    const stop = () => {
      clearTimeout(timer);
      req.off("end", stop);
      res.off("close", stop);
    };
    req.once("end", stop);
    res.once("close", stop);
    next();
  };
}
