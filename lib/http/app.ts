/**
 * The HTTP surface (R-HTTP), composed: the guards every request passes
 * (origin, body deadline, bearer token), the probes, the sandbox, and the
 * routes of the run lifecycle, each a thin adapter over `Runs`
 * (`runs/runs.ts`): `POST /` (`run-route.ts`), the observers
 * (`observe-routes.ts`), the cancel (`cancel-route.ts`) and the handoff's
 * internal run. Everything that can go wrong before a stream starts is
 * answered as `{"error": {"code", "message"}}` with the status of the wire
 * contract §9, in the request's language; once a stream has started,
 * failures are `RUN_ERROR` events.
 */
import express, { type ErrorRequestHandler, type Response } from "express";
import type { A2AClient } from "../a2a/client.js";
import type { Config } from "../config.js";
import { AguiError, toAguiError } from "../errors.js";
import { describeError } from "../i18n/index.js";
import { silentLogger, type Logger } from "../log.js";
import { metricsRoute } from "../metrics/metrics-route.js";
import type { ServiceMetrics } from "../metrics/service-metrics.js";
import type { Runs } from "../runs/runs.js";
import type { ThreadStore } from "../state/thread-store.js";
import { bearerAuth } from "./auth.js";
import { cancelRoute } from "./cancel-route.js";
import { handoffRoute } from "./handoff-route.js";
import { httpStatusOf } from "./http-status.js";
import { bodyDeadline } from "./json-body.js";
import type { KernelFixtures } from "./kernel-fixtures.js";
import { observeRoutes } from "./observe-routes.js";
import { originGuard } from "./origin-guard.js";
import { probeRoutes, type Readiness } from "./probes.js";
import { requestLanguage } from "./request-language.js";
import { requestSpan } from "./request-span.js";
import { logErrorAnswer, requestLogging } from "./request-log.js";
import { httpRunClient } from "./stream-client.js";
import { runRoute } from "./run-route.js";
import { sandboxRoute } from "./sandbox-route.js";
import { sandboxReplayRoute } from "./sandbox-replay.js";
import type { SseSinkOptions } from "./sse-sink.js";
import { threadListRoute } from "./thread-list-route.js";

export interface AppDependencies {
  config: Pick<
    Config,
    | "authToken"
    | "heartbeatMs"
    | "clientStallS"
    | "host"
    | "allowedHosts"
    | "allowedOrigins"
    | "bodyTimeoutS"
    | "sandbox"
    | "sandboxMaxReplays"
  >;
  /** The run lifecycle (see `runs/runs.ts`): every route that starts, watches or cancels a run calls it. */
  runs: Runs;
  /** The kernel, for the routes that only pass a request on (handoff). */
  a2a: Pick<A2AClient, "handoff">;
  /** Where the service's records go (see `log.ts`); each request logs through a child (see `request-log.ts`). */
  log?: Logger;
  /** Embedding and tests: the SSE sink's high-water mark, and a look at its pressure (see `sse-sink.ts`). */
  sse?: Pick<SseSinkOptions, "highWaterMark" | "onPressure">;
  /** What `/ready` checks (see `probes.ts`); without it only `/health` is served. */
  readiness?: Readiness;
  /** The kernel's fixture list for the sandbox (see `kernel-fixtures.ts`); without it the sandbox offers free text only. */
  kernelFixtures?: KernelFixtures;
  /** What `GET /metrics` tells (see `metrics/service-metrics.ts`); without it there is no such route. */
  metrics?: ServiceMetrics;
  /** The thread store, for the list of threads (see `thread-list-route.ts`); without it the list is empty. */
  threadStore?: Pick<ThreadStore, "listThreads">;
}

export function sendError(res: Response, error: AguiError, language: string): void {
  if (error.retryAfterS !== undefined) res.set("Retry-After", String(error.retryAfterS));
  const { message, detail } = describeError(error, language);
  res
    .status(httpStatusOf(error.code))
    .json({ error: { code: error.code, message, ...(detail === undefined ? {} : { detail }), ...error.details } });
}

export function createApp({
  config,
  runs,
  a2a,
  log = silentLogger,
  sse = {},
  readiness,
  kernelFixtures,
  metrics,
  threadStore,
}: AppDependencies): express.Express {
  const app = express();
  app.disable("x-powered-by");
  // First of all: a request refused by a guard is in the traces too, under its caller's trace.
  app.use(requestSpan());
  app.use(requestLogging(log));
  // Probes come from load balancers and orchestrators, which send no token and name the pod by its address (any Host);
  // they say nothing a token or the Host check would protect, and answer no other site's page (no CORS header).
  app.use(probeRoutes(readiness));
  // Before everything else, the sandbox included: a request naming another site is refused, token or not.
  app.use(originGuard(config));
  app.use(
    bodyDeadline(config.bodyTimeoutS * 1000, (req, res, error) => {
      logErrorAnswer(res, error, error);
      sendError(res, error, requestLanguage(req));
    }),
  );
  // Off (IAC_CODE_AGUI_SANDBOX=off), neither the page nor its replay exists: /sandbox/… is a 404 like any unknown path.
  if (config.sandbox !== "off") {
    // The sandbox page is static: nothing to protect, and a browser tab cannot send a bearer token for a page
    // load. Everything it calls (the fixture list, POST /, …) still needs the token.
    app.use("/sandbox", sandboxRoute({ authToken: config.authToken, ...(kernelFixtures ? { kernelFixtures } : {}) }));
    // Beside the page, so it goes where the sandbox goes; it asks for the token itself, as every run does.
    app.use(
      "/sandbox",
      sandboxReplayRoute({
        authToken: config.authToken,
        heartbeatMs: config.heartbeatMs,
        clientStallS: config.clientStallS,
        maxReplays: config.sandboxMaxReplays,
        sse,
      }),
    );
  }
  app.use(bearerAuth(config.authToken));
  if (metrics) app.use(metricsRoute(metrics));

  const streams = { clientStallS: config.clientStallS, sse };
  app.use(runRoute(runs, streams, metrics));
  // The pending input an apply-input delivers: a run like any other, its events read by nobody (see `handoff-route.ts`).
  app.use("/iac-code/handoff", handoffRoute({ a2a, runInternally: (body, req, res) => runs.runToEnd(body, httpRunClient(req, res)) }));
  const observers = observeRoutes(runs, {
    ...streams,
    sse: metrics ? { ...sse, track: () => metrics.streamOpened("observer") } : sse,
  });
  app.use("/extensions/iac-code/v1/executions", cancelRoute(runs), observers.executions);
  app.use("/extensions/iac-code/v1/threads", threadListRoute(threadStore ?? {}), observers.threads);

  app.use((_req, _res, next) => next(new AguiError("NOT_FOUND")));

  const answerErrors: ErrorRequestHandler = (error: unknown, req, res, _next) => {
    const agui = toAguiError(error);
    logErrorAnswer(res, error, agui);
    if (res.headersSent) return res.end();
    sendError(res, agui, requestLanguage(req));
  };
  app.use(answerErrors);
  return app;
}
