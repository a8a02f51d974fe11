/**
 * What `GET /metrics` tells Prometheus (see README "Metrics"). Each service
 * has a registry of its own, never prom-client's global one, so several
 * services in one process (the tests, an embedder) count apart.
 *
 * Every label value comes from a closed set: a kind of run or stream, an
 * outcome, an error code of `ERROR_CODES`, a kernel method or a store
 * operation named in the code. Never a thread, run or user id, nor any
 * text a client or the kernel chose: Prometheus keeps one series per label
 * value, so an open set would grow without bound and leak what it names.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import { ERROR_CODES, type ErrorCode } from "../errors.js";

export const METRICS_PREFIX = "iac_code_agui_";

/** A new turn, the resume of an interrupt, or guidance for a running task (`threads/guidance.ts`). */
export type RunKind = "new" | "resume" | "guidance";
/** How a run ended: RUN_FINISHED's outcome (a user's cancel of an interrupt is `cancelled`), RUN_ERROR, or a client that left before either. */
export type RunOutcome = "success" | "interrupt" | "cancelled" | "error" | "abandoned";
/** A run's own stream (`POST /`), or an observer's (subscribe and connect routes). */
export type StreamKind = "run" | "observer";
/** How a stream ended: it was over, its client went away, or its client took nothing for `IAC_CODE_AGUI_CLIENT_STALL_S`. */
export type StreamEnd = "completed" | "left" | "stalled";

/** Seconds: from a millisecond on a loopback kernel to the minutes of a restore. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

const knownCodes = new Set<string>(ERROR_CODES);
/** A RUN_ERROR code as a label: one of the documented codes, else `OTHER` (a label value must never be open-ended). */
export const codeLabel = (code: string | undefined): ErrorCode | "OTHER" | "" =>
  code === undefined ? "" : knownCodes.has(code) ? (code as ErrorCode) : "OTHER";

export interface ServiceMetricsOptions {
  /** prom-client's default process and Node.js metrics (CPU, memory, event loop lag, GC); the service turns them on. */
  processMetrics?: boolean;
}

export class ServiceMetrics {
  readonly registry = new Registry();

  readonly runsStarted = new Counter({
    name: `${METRICS_PREFIX}runs_started_total`,
    help: "Runs admitted, by kind (new turn, resume, guidance).",
    labelNames: ["kind"] as const,
    registers: [this.registry],
  });

  readonly runsEnded = new Counter({
    name: `${METRICS_PREFIX}runs_ended_total`,
    help: "Runs ended, by kind, outcome (success, interrupt, cancelled, error, abandoned) and RUN_ERROR code (empty unless the outcome is error).",
    labelNames: ["kind", "outcome", "code"] as const,
    registers: [this.registry],
  });

  readonly streamsActive = new Gauge({
    name: `${METRICS_PREFIX}streams_active`,
    help: "Event streams open now: a run's own (run) or an observer's (observer).",
    labelNames: ["stream"] as const,
    registers: [this.registry],
  });

  readonly clientsGone = new Counter({
    name: `${METRICS_PREFIX}clients_gone_total`,
    help: "Streams whose client went away before they ended (left), or was dropped for taking nothing while bytes waited (stalled).",
    labelNames: ["stream", "reason"] as const,
    registers: [this.registry],
  });

  readonly runsRefused = new Counter({
    name: `${METRICS_PREFIX}runs_refused_total`,
    help: "Runs refused with TOO_MANY_RUNS before the kernel was called, by the cap reached (instance, user).",
    labelNames: ["limit"] as const,
    registers: [this.registry],
  });

  readonly timeToFirstEvent = new Histogram({
    name: `${METRICS_PREFIX}time_to_first_event_seconds`,
    help: "From a run request's arrival to its first event handed to the stream (admission included), in seconds.",
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  readonly kernelCalls = new Histogram({
    name: `${METRICS_PREFIX}kernel_call_duration_seconds`,
    help: "Kernel calls by method and outcome (ok, error): until the answer for a request, until the first record for a stream, in seconds.",
    labelNames: ["method", "outcome"] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  readonly storeOperations = new Histogram({
    name: `${METRICS_PREFIX}state_store_duration_seconds`,
    help: "Thread store operations by operation and outcome (ok, error), whichever store is configured, in seconds.",
    labelNames: ["operation", "outcome"] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  readonly leaseConflicts = new Counter({
    name: `${METRICS_PREFIX}lease_conflicts_total`,
    help: "Thread leases refused because another run held the thread (answered THREAD_BUSY unless the holder let go in time).",
    registers: [this.registry],
  });

  readonly threadsRemoved = new Counter({
    name: `${METRICS_PREFIX}threads_removed_total`,
    help: "Threads the file store removed after IAC_CODE_AGUI_THREAD_RETENTION_S idle (Redis expires its own and counts none here).",
    registers: [this.registry],
  });

  constructor({ processMetrics = false }: ServiceMetricsOptions = {}) {
    if (processMetrics) collectDefaultMetrics({ register: this.registry });
  }

  /** The text Prometheus scrapes, and its content type. */
  async scrape(): Promise<{ contentType: string; text: string }> {
    return { contentType: this.registry.contentType, text: await this.registry.metrics() };
  }

  /**
   * Tells the metrics a stream opened; what it returns is told once how it ended
   * (see `SseSinkOptions.track`).
   */
  streamOpened(stream: StreamKind): (end: StreamEnd) => void {
    this.streamsActive.inc({ stream });
    let open = true;
    return (end) => {
      if (!open) return;
      open = false;
      this.streamsActive.dec({ stream });
      if (end !== "completed") this.clientsGone.inc({ stream, reason: end });
    };
  }
}

/** Seconds since `startedAt`, a `performance.now()` reading. */
export const secondsSince = (startedAt: number) => (performance.now() - startedAt) / 1000;
