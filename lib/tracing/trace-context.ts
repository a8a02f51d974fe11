/**
 * W3C Trace Context (`traceparent`, `tracestate`) read from a caller and
 * written on each kernel call, for a service that exports no traces: it
 * still hands the caller's trace on, so the kernel's spans join it. With
 * traces on, the SDK's own propagator does this (see `start-tracing.ts`).
 *
 * Only version `00` is written; a later version is read by its first four
 * fields, as the specification asks of a reader that knows only `00`.
 */
import {
  isSpanContextValid,
  trace,
  TraceFlags,
  type Context,
  type TextMapGetter,
  type TextMapPropagator,
  type TextMapSetter,
  type TraceState,
} from "@opentelemetry/api";

const TRACEPARENT = "traceparent";
const TRACESTATE = "tracestate";
const TRACEPARENT_FORMAT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/** The caller's `tracestate` handed on as it came: this service adds no entry of its own. */
function passedOn(raw: string): TraceState {
  const state: TraceState = {
    set: () => state,
    unset: () => state,
    get: () => undefined,
    serialize: () => raw,
  };
  return state;
}

const firstOf = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value[0] : value);

export class TraceContextPropagator implements TextMapPropagator {
  inject(context: Context, carrier: unknown, setter: TextMapSetter): void {
    const span = trace.getSpanContext(context);
    if (!span || !isSpanContextValid(span)) return;
    const flags = (span.traceFlags & TraceFlags.SAMPLED).toString(16).padStart(2, "0");
    setter.set(carrier, TRACEPARENT, `00-${span.traceId}-${span.spanId}-${flags}`);
    const state = span.traceState?.serialize();
    if (state) setter.set(carrier, TRACESTATE, state);
  }

  extract(context: Context, carrier: unknown, getter: TextMapGetter): Context {
    const header = firstOf(getter.get(carrier, TRACEPARENT))?.trim();
    const parts = header === undefined ? null : TRACEPARENT_FORMAT.exec(header);
    if (!parts) return context;
    const [, version, traceId, spanId, flags, rest] = parts as unknown as [string, string, string, string, string, string?];
    // `ff` is forbidden, and version 00 has exactly four fields.
    if (version === "ff" || (version === "00" && rest !== undefined)) return context;
    const state = getter.get(carrier, TRACESTATE);
    const raw = Array.isArray(state) ? state.join(",") : state;
    const spanContext = {
      traceId,
      spanId,
      traceFlags: parseInt(flags, 16) & TraceFlags.SAMPLED,
      isRemote: true,
      ...(raw ? { traceState: passedOn(raw) } : {}),
    };
    return isSpanContextValid(spanContext) ? trace.setSpanContext(context, spanContext) : context;
  }

  fields(): string[] {
    return [TRACEPARENT, TRACESTATE];
  }
}
