/**
 * JSON request bodies: `application/json` only (415 otherwise), a size cap
 * (413), and malformed JSON answered as 400 `INVALID_JSON` — each as the
 * documented error code rather than Express's default HTML page.
 */
import express, { type ErrorRequestHandler, type RequestHandler } from "express";
import { AguiError } from "../errors.js";

export const MAX_RUN_BODY_BYTES = 12 * 1024 * 1024;
export const MAX_CONTROL_BODY_BYTES = 64 * 1024;

const requireJson: RequestHandler = (req, _res, next) => {
  next(req.is("application/json") ? undefined : new AguiError("UNSUPPORTED_MEDIA_TYPE"));
};

/** body-parser reports its failures by `type`; map them onto our codes. */
const bodyErrors: ErrorRequestHandler = (error: { type?: string }, _req, _res, next) => {
  switch (error.type) {
    case "entity.too.large":
      return next(new AguiError("REQUEST_TOO_LARGE", {}, { cause: error }));
    case "entity.parse.failed":
      return next(new AguiError("INVALID_JSON", {}, { cause: error }));
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
