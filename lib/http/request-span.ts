/**
 * Each request's own span (see docs/operations.md "Traces"): a server span
 * named by its method and route template (`POST /`, `GET /extensions/…
 * /threads/:threadId/connect`), a child of the caller's W3C `traceparent`
 * when it sends one, ended when the connection closes (a run's span lasts
 * as long as its stream). Its attributes are the method, the route, the
 * status and the ids the request turned out to be about (`noteSpanIds`);
 * never the path as sent, its query, headers or body.
 *
 * The span is the active context for everything the request does, the
 * kernel calls included, so those carry the trace on to the kernel (the
 * body parser keeps the context its body's events would lose: raw-body
 * binds its callback to it).
 */
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Span } from "@opentelemetry/api";
import type { Request, RequestHandler, Response } from "express";
import { idAttributes, spansExported, tracer } from "../tracing/spans.js";

const SPAN = "iacCodeAguiSpan";

export function requestSpan(): RequestHandler {
  return (req, res, next) => {
    // No spans exported: only the caller's trace goes on to the kernel, and only when it sent one.
    if (!spansExported())
      return req.headers.traceparent === undefined ? next() : context.with(propagation.extract(ROOT_CONTEXT, req.headers), next);
    const parent = propagation.extract(ROOT_CONTEXT, req.headers);
    const span = tracer().startSpan(req.method, { kind: SpanKind.SERVER, attributes: { "http.request.method": req.method } }, parent);
    const active = trace.setSpan(parent, span);
    res.locals[SPAN] = span;
    const matched = routeTemplate(req);
    res.once("close", () => {
      const route = matched();
      if (route !== undefined) {
        span.updateName(`${req.method} ${route}`);
        span.setAttribute("http.route", route);
      }
      span.setAttribute("http.response.status_code", res.statusCode);
      if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    });
    context.with(active, next);
  };
}

/** Adds the ids (thread, run, execution) to the request's span. */
export function noteSpanIds(res: Response, ids: Readonly<Record<string, unknown>>): void {
  (res.locals[SPAN] as Span | undefined)?.setAttributes(idAttributes(ids));
}

/**
 * The template of the route that matched, read as the router sets it: the
 * router's mount point (`baseUrl`) is right then, and put back once a
 * failure leaves the router for the error handler.
 */
function routeTemplate(req: Request): () => string | undefined {
  let template: string | undefined;
  let route: unknown;
  Object.defineProperty(req, "route", {
    configurable: true,
    enumerable: true,
    get: () => route,
    set(value: unknown) {
      route = value;
      const path = (value as { path?: unknown } | undefined)?.path;
      if (typeof path === "string") template = `${req.baseUrl}${path}`;
    },
  });
  return () => template;
}
