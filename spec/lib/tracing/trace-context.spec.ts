/**
 * The pieces that carry a caller's trace when no traces are exported: the
 * W3C `traceparent` read and written as the specification says, and the
 * choice the OTEL_* variables make between that and the SDK.
 */
import { describe, expect, it } from "@jest/globals";
import { defaultTextMapGetter, defaultTextMapSetter, ROOT_CONTEXT, trace } from "@opentelemetry/api";
import { tracesRequested } from "../../../lib/tracing/start-tracing.js";
import { TraceContextPropagator } from "../../../lib/tracing/trace-context.js";

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const SPAN_ID = "00f067aa0ba902b7";
const propagator = new TraceContextPropagator();

/** What `headers` hand on: the traceparent and tracestate written after reading them. */
function handedOn(headers: Record<string, string>): Record<string, string> {
  const read = propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter);
  const written: Record<string, string> = {};
  propagator.inject(read, written, defaultTextMapSetter);
  return written;
}

describe("the W3C trace context", () => {
  it("hands a valid traceparent and its tracestate on as they came", () => {
    const traceparent = `00-${TRACE_ID}-${SPAN_ID}-01`;
    expect(handedOn({ traceparent, tracestate: "a=1,b=2" })).toEqual({ traceparent, tracestate: "a=1,b=2" });
    expect(handedOn({ traceparent: `00-${TRACE_ID}-${SPAN_ID}-00` })).toEqual({ traceparent: `00-${TRACE_ID}-${SPAN_ID}-00` });
  });

  it("reads a later version by its first four fields, and writes version 00", () => {
    expect(handedOn({ traceparent: `01-${TRACE_ID}-${SPAN_ID}-01-what-comes-later` })).toEqual({
      traceparent: `00-${TRACE_ID}-${SPAN_ID}-01`,
    });
  });

  it.each([
    ["an all-zero trace id", `00-${"0".repeat(32)}-${SPAN_ID}-01`],
    ["an all-zero span id", `00-${TRACE_ID}-${"0".repeat(16)}-01`],
    ["version ff", `ff-${TRACE_ID}-${SPAN_ID}-01`],
    ["version 00 with more fields", `00-${TRACE_ID}-${SPAN_ID}-01-more`],
    ["upper-case hex", `00-${TRACE_ID.toUpperCase()}-${SPAN_ID}-01`],
    ["a short trace id", `00-${TRACE_ID.slice(1)}-${SPAN_ID}-01`],
    ["no flags", `00-${TRACE_ID}-${SPAN_ID}`],
  ])("ignores a traceparent with %s", (_case, traceparent) => {
    const read = propagator.extract(ROOT_CONTEXT, { traceparent }, defaultTextMapGetter);
    expect(trace.getSpanContext(read)).toBeUndefined();
    expect(handedOn({ traceparent })).toEqual({});
  });
});

describe("whether traces are exported", () => {
  it.each<[string, Record<string, string>, boolean]>([
    ["nothing set", {}, false],
    ["an exporter named", { OTEL_TRACES_EXPORTER: "otlp" }, true],
    ["the console exporter", { OTEL_TRACES_EXPORTER: "console" }, true],
    ["an OTLP endpoint", { OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" }, true],
    ["a traces endpoint", { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://collector:4318/v1/traces" }, true],
    ["an endpoint with the exporter none", { OTEL_TRACES_EXPORTER: "none", OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" }, false],
    ["the SDK disabled", { OTEL_SDK_DISABLED: "true", OTEL_TRACES_EXPORTER: "otlp" }, false],
    ["only a service name", { OTEL_SERVICE_NAME: "agui" }, false],
  ])("with %s", (_case, env, exported) => {
    expect(tracesRequested(env)).toBe(exported);
  });
});
