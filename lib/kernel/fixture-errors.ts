/**
 * How a fixture `error` line reaches the wire as a JSON-RPC error.
 *
 * An executor cannot fail a stream by itself: when `execute()` throws, the
 * SDK publishes a FAILED status instead. Only an exception out of the request
 * handler's event stream becomes an error, and the SDK then writes it the way
 * a real kernel does: a plain JSON-RPC error (HTTP 200) when nothing was sent
 * yet, an `event: error` SSE record mid-stream. So the executor records the
 * error for its call and returns; the request handler throws it once the
 * events published before it have been sent.
 *
 * The SDK serialises such an error as `{code, message}` only and drops any
 * `data`; kernels put meaning there (`{code: "SESSION_BACKUP_NOT_READY",
 * retryable: true}`), so `restoreErrorData` writes the fixture's `data` back
 * into the error the SDK is about to send for that call.
 */
import { formatSSEErrorEvent } from "@a2a-js/sdk";
import { JsonRpcTransportError } from "@a2a-js/sdk/errors";
import { STATE_HEADERS_KEY, type ServerCallContext } from "@a2a-js/sdk/server";
import type { RequestHandler } from "express";
import type { FixtureError } from "../fixtures/fixture-format.js";

// Keyed by the request's header object: the one identity that the SDK's
// call context (its `state.headers`) and the Express request share.
type CallKey = object;

export class FixtureErrors {
  private readonly raised = new WeakMap<CallKey, FixtureError>();

  raise(call: ServerCallContext, error: FixtureError): void {
    this.raised.set(keyOf(call), error);
  }

  throwIfRaised(call: ServerCallContext): void {
    const error = this.raised.get(keyOf(call));
    if (error) throw new JsonRpcTransportError({ jsonrpc: "2.0", id: null, error: { code: error.code, message: error.message } });
  }

  /** Express middleware for the JSON-RPC route; see the module comment. */
  restoreErrorData(): RequestHandler {
    return (req, res, next) => {
      const withData = () => {
        const error = this.raised.get(req.headers);
        return error?.data === undefined ? undefined : { jsonrpc: "2.0", id: req.body?.id ?? null, error };
      };
      const json = res.json.bind(res);
      res.json = (body: unknown) => json(isErrorEnvelope(body) ? (withData() ?? body) : body);
      const write = res.write.bind(res) as (chunk: unknown, ...rest: unknown[]) => boolean;
      res.write = ((chunk: unknown, ...rest: unknown[]) => {
        const envelope = typeof chunk === "string" && chunk.startsWith("event: error") ? withData() : undefined;
        return write(envelope ? formatSSEErrorEvent(envelope) : chunk, ...rest);
      }) as typeof res.write;
      next();
    };
  }
}

function keyOf(call: ServerCallContext): CallKey {
  const headers = call.state.get(STATE_HEADERS_KEY);
  if (typeof headers !== "object" || headers === null) throw new Error("call context without request headers");
  return headers;
}

const isErrorEnvelope = (body: unknown) => typeof body === "object" && body !== null && "error" in body;
