/**
 * Traces, switched on by the standard `OTEL_*` variables (see
 * docs/operations.md "Traces"): the OpenTelemetry Node SDK is loaded and
 * started only when they ask for traces, so a default start loads none of
 * it. Only traces: the SDK's metrics and logs stay off whatever the
 * environment says (`/metrics` and the JSON log are the service's own).
 *
 * Off, the caller's `traceparent` is still handed on to each kernel call:
 * a context manager and the W3C propagator of our own stand in for the
 * SDK's, and the API's no-op tracer then passes the caller's span through.
 */
import { context, diag, DiagLogLevel, propagation, type DiagLogger } from "@opentelemetry/api";
import type { Logger } from "../log.js";
import { AsyncLocalContextManager } from "./async-local-context.js";
import { markSpansExported } from "./spans.js";
import { TraceContextPropagator } from "./trace-context.js";

export const DEFAULT_SERVICE_NAME = "iac-code-agui";

export interface Tracing {
  /** Whether spans are exported (the SDK runs). */
  exporting: boolean;
  /** Sends the spans not yet exported and stops; the service calls it once it has drained. Never rejects. */
  shutdown(): Promise<void>;
}

type Env = Readonly<Record<string, string | undefined>>;

const listOf = (value: string | undefined) =>
  (value ?? "")
    .split(",")
    .map((item) => item.trim().toLowerCase())
    .filter((item) => item !== "");

/**
 * Whether the environment asks for traces: an exporter named in
 * `OTEL_TRACES_EXPORTER` (other than `none`), or an OTLP endpoint to send
 * them to; never while `OTEL_SDK_DISABLED=true`. The SDK itself would
 * export to `localhost:4318` with nothing set at all: a service nobody
 * asked to trace must not try to.
 */
export function tracesRequested(env: Env): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true") return false;
  const exporters = listOf(env.OTEL_TRACES_EXPORTER);
  if (exporters.length > 0) return exporters.some((name) => name !== "none");
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
}

/** The SDK's own complaints (an exporter that cannot reach its collector) as warnings in the service's log. */
function diagnosticsTo(log: Logger): DiagLogger {
  const warn = (message: string) => log.warn({ component: "tracing" }, message);
  const ignore = () => {};
  return { error: warn, warn, info: ignore, debug: ignore, verbose: ignore };
}

export async function startTracing(env: Env, log: Logger): Promise<Tracing> {
  if (!tracesRequested(env)) {
    context.setGlobalContextManager(new AsyncLocalContextManager());
    propagation.setGlobalPropagator(new TraceContextPropagator());
    return { exporting: false, shutdown: () => Promise.resolve() };
  }
  diag.setLogger(diagnosticsTo(log), DiagLogLevel.WARN);
  // Loaded here only: the SDK and its exporters are a few dozen modules a start without traces never reads.
  const { NodeSDK } = await import("@opentelemetry/sdk-node");
  const named = Boolean(env.OTEL_SERVICE_NAME?.trim()) || /(^|,)\s*service\.name\s*=/.test(env.OTEL_RESOURCE_ATTRIBUTES ?? "");
  const sdk = new NodeSDK({
    ...(named ? {} : { serviceName: DEFAULT_SERVICE_NAME }),
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [],
  });
  sdk.start();
  markSpansExported();
  // A collector out of reach costs the spans not yet sent, never the service's own exit.
  const shutdown = () =>
    sdk.shutdown().catch((error: unknown) => log.warn({ component: "tracing", err: error }, "the last spans could not be sent"));
  return { exporting: true, shutdown };
}
