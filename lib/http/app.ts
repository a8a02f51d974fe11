/**
 * The HTTP surface (R-HTTP): `GET /health`, `POST /` (a RunAgentInput in,
 * a stream of AG-UI events out: SSE, or protobuf for a client whose Accept
 * asks for it, see `event-encoding.ts`) and the cancel route. Everything that
 * can go wrong before the stream starts is answered as `{"error": {"code",
 * "message"}}` with the status of the wire contract §9, in the request's
 * language; once the stream has started, failures are `RUN_ERROR` events.
 */
import { randomUUID } from "node:crypto";
import { lastValueFrom } from "rxjs";
import express, { type ErrorRequestHandler, type Request, type RequestHandler, type Response } from "express";
import type { A2AClient } from "../a2a/client.js";
import { userPartsForKernel } from "../a2a/images.js";
import type { Config } from "../config.js";
import { AguiError, toAguiError } from "../errors.js";
import { messageFor } from "../i18n/index.js";
import { keepInput } from "../interrupts/keep-input.js";
import { errorFields, silentLogger, type Logger } from "../log.js";
import { toInterrupt } from "../interrupts/to-interrupt.js";
import { runAgent } from "../run.js";
import type { RunPorts } from "../run-pipeline.js";
import type { ThreadStore } from "../state/thread-store.js";
import { admitRun } from "../threads/admission.js";
import { LocalDisconnectGrace } from "../threads/disconnect-grace.js";
import { expireHeldExecution } from "../threads/disconnect-grace-redis.js";
import { endStoredExecution } from "../threads/end-execution.js";
import type { SharedThreads } from "../threads/shared-threads-redis.js";
import { LocalThreadStatusHub } from "../threads/status-hub.js";
import { ThreadRun } from "../threads/thread-run.js";
import { admitGuidance, guidanceEvents, isGuidanceRun } from "../threads/guidance.js";
import { validateRunInput } from "../validation.js";
import { bearerAuth } from "./auth.js";
import { requestLanguage } from "./request-language.js";
import { httpStatusOf } from "./http-status.js";
import { cancelRoute } from "./cancel-route.js";
import { connectRoute } from "./connect-route.js";
import { handoffRoute } from "./handoff-route.js";
import { probeRoutes, type Readiness } from "./probes.js";
import { sandboxRoute } from "./sandbox-route.js";
import { sandboxReplayRoute } from "./sandbox-replay.js";
import type { KernelFixtures } from "./kernel-fixtures.js";
import { subscribeRoute } from "./subscribe-route.js";
import { bodyDeadline, jsonBody, MAX_RUN_BODY_BYTES } from "./json-body.js";
import { originGuard } from "./origin-guard.js";
import { logErrorAnswer, noteRequestIds, requestLog, requestLogging } from "./request-log.js";
import { instrumentedKernel, instrumentedStore } from "../metrics/instrumented.js";
import { metricsRoute } from "../metrics/metrics-route.js";
import { countRun, runKindOf } from "../metrics/run-metrics.js";
import type { ServiceMetrics } from "../metrics/service-metrics.js";
import { LeavingRuns, RunRegistry, type RunA2AClient } from "../runs/run-registry.js";
import { FlowGate, readThrough } from "../runs/flow-gate.js";
import { negotiateEncoding } from "./event-encoding.js";
import { pipeToSse, type SseSinkOptions } from "./sse-sink.js";

export interface AppDependencies {
  config: Pick<
    Config,
    | "authToken"
    | "allowedCwds"
    | "heartbeatMs"
    | "interruptTtlS"
    | "disconnectGraceMs"
    | "clientStallS"
    | "host"
    | "allowedHosts"
    | "allowedOrigins"
    | "bodyTimeoutS"
    | "sandbox"
  >;
  a2a: A2AClient;
  store: ThreadStore;
  now?: () => number;
  /** Where the service's records go (see `log.ts`); each request logs through a child (see `request-log.ts`). */
  log?: Logger;
  /** Embedding and tests: the SSE sink's high-water mark, and a look at its pressure (see `sse-sink.ts`). */
  sse?: Pick<SseSinkOptions, "highWaterMark" | "onPressure">;
  /** Tests and tracing: wraps each stage of every run\'s chain (see `RunPorts.instrument`). */
  instrument?: RunPorts["instrument"];
  /** The runs in flight, which a shutdown drains (see `server.ts`). */
  runs?: RunRegistry;
  /** What `/ready` checks (see `probes.ts`); without it only `/health` is served. */
  readiness?: Readiness;
  /** Instances on one Redis share the thread status and the grace window; without it both stay in this process. */
  sharedThreads?: SharedThreads;
  /** The kernel's fixture list for the sandbox (see `kernel-fixtures.ts`); without it the sandbox offers free text only. */
  kernelFixtures?: KernelFixtures;
  /** What `GET /metrics` tells (see `metrics/service-metrics.ts`); without it there is no such route, and nothing is counted. */
  metrics?: ServiceMetrics;
}

export function sendError(res: Response, error: AguiError, language: string): void {
  res.status(httpStatusOf(error.code)).json({ error: { code: error.code, message: messageFor(error, language), ...error.details } });
}

export function createApp({
  config,
  a2a,
  store,
  now = Date.now,
  log = silentLogger,
  sse = {},
  instrument,
  runs = new RunRegistry(now),
  readiness,
  sharedThreads,
  kernelFixtures,
  metrics,
}: AppDependencies): express.Express {
  const app = express();
  app.disable("x-powered-by");
  if (metrics) {
    // Every route below sees them timed: the kernel's calls and the store's operations, whichever store it is.
    a2a = instrumentedKernel(a2a, metrics);
    store = instrumentedStore(store, metrics);
  }
  const observerSse = metrics ? { ...sse, track: () => metrics.streamOpened("observer") } : sse;
  app.use(requestLogging(log));
  // Before everything, /health and the sandbox included: a request naming another site is refused, token or not.
  app.use(originGuard(config));
  app.use(
    bodyDeadline(config.bodyTimeoutS * 1000, (req, res, error) => {
      logErrorAnswer(res, error, error);
      sendError(res, error, requestLanguage(req));
    }),
  );
  // Off (IAC_CODE_AGUI_SANDBOX=off), neither the page nor its replay exists: /sandbox/… is a 404 like any unknown path.
  if (config.sandbox !== "off") {
    // The sandbox is a static page and the names of the demo fixtures: nothing to protect, and a browser tab
    // cannot send a bearer token for a page load. Everything it calls (POST /, …) still needs the token.
    app.use("/sandbox", sandboxRoute(kernelFixtures ? { kernelFixtures } : {}));
    // Beside the page, so it goes where the sandbox goes; it asks for the token itself, as every run does.
    app.use("/sandbox", sandboxReplayRoute({ authToken: config.authToken, heartbeatMs: config.heartbeatMs }));
  }
  // Probes come from load balancers, which send no token; they say nothing a token would protect.
  app.use(probeRoutes(readiness));
  app.use(bearerAuth(config.authToken));
  if (metrics) app.use(metricsRoute(metrics));
  /** The run each thread has in this process: a cancel goes through it, so its changes stay in order. */
  const activeRuns = new Map<string, ThreadRun>();
  const leaving = new LeavingRuns();
  const endExecution = (threadId: string, executionId: string) => endStoredExecution(store, threadId, executionId);
  const hub = sharedThreads?.hub ?? new LocalThreadStatusHub();
  // A wait another instance started may end here: its task is cancelled and its execution ended from its ids.
  const expireHeld = expireHeldExecution({ cancelTask: (taskId) => a2a.cancelTask(taskId), endExecution, log });
  const grace = sharedThreads?.grace(config.disconnectGraceMs, expireHeld) ?? new LocalDisconnectGrace(config.disconnectGraceMs);

  /**
   * A RunAgentInput validated, admitted and set running as `POST /` does, counted and logged under `res`:
   * its thread (held until the run lets go) and its chain, which runs when subscribed.
   */
  const launchRun = async (body: unknown, req: Request, res: Response, runA2A: RunA2AClient, gate?: FlowGate) => {
    const input = validateRunInput(body, config);
    const language = requestLanguage(req);
    noteRequestIds(res, { threadId: input.threadId, runId: input.runId });
    const runLog = requestLog(res).child({ threadId: input.threadId, runId: input.runId });
    if (isGuidanceRun(input)) {
      // Steers the thread's running task: no lease, no grace expiry, the thread's run left as it is (see `guidance.ts`).
      const target = await admitGuidance(input, activeRuns.get(input.threadId), store);
      // Its images go as a new turn's do: decoded, and resized where too large.
      const userParts = await userPartsForKernel(input);
      const guidance$ = guidanceEvents(input, target, {
        userParts,
        sendStreamingMessage: (params) => runA2A.sendStreamingMessage(params),
        language,
        describe: (error) => messageFor(error, language),
        now,
        onFailure: (error) => runLog.warn({ ...errorFields(error), code: error.code }, "the guidance run failed"),
      });
      return { input, thread: undefined, threadReleased: Promise.resolve(), run$: guidance$, runLog };
    }
    // Before admission: an image the kernel cannot be sent is a 400 that leaves the thread as it was. A resume sends no message.
    const userParts = input.resume === undefined ? await userPartsForKernel(input) : undefined;
    // A new turn gives up on an execution whose client left and never came back.
    if (input.resume === undefined) await grace.expireThread(input.threadId);
    const admitted = await admitRun(input, {
      store,
      now,
      newExecutionId: randomUUID,
      log: runLog,
      cancelTask: (taskId) => runA2A.cancelTask(taskId),
      getTask: (taskId) => runA2A.getTask(taskId),
      interruptTtlS: config.interruptTtlS,
      listTasks: (contextId) => runA2A.listTasks(contextId),
      isHeld: (executionId) => grace.holds(executionId),
      toInterrupt: (pending) => toInterrupt(pending, language),
      waitForLeavingRun: (threadId) => leaving.waitFor(threadId),
    });
    let released!: () => void;
    const threadReleased = new Promise<void>((resolve) => (released = resolve));
    const thread = new ThreadRun(admitted.state, {
      store,
      lease: admitted.lease,
      interruptTtlS: config.interruptTtlS,
      now,
      keepInput: (projection) => keepInput(projection),
      toInterrupt: (pending) => toInterrupt(pending, language),
      onClosed: () => {
        if (activeRuns.get(input.threadId) === thread) activeRuns.delete(input.threadId);
        released();
      },
    });
    activeRuns.set(input.threadId, thread);
    const run$ = runAgent(
      { input, language, thread, isResume: admitted.isResume, userParts },
      {
        a2a: runA2A,
        heartbeatMs: config.heartbeatMs,
        log: requestLog(res),
        now,
        hub,
        grace,
        endExecution,
        instrument,
        ...(gate === undefined ? {} : { holdReadsDuring: <T>(write: Promise<T>) => gate.hold(write) }),
      },
    );
    return { input, thread, threadReleased, run$, runLog };
  };

  const startRun: RequestHandler = async (req, res) => {
    // Counted from here, so a drain waits for a run still being admitted; its kernel calls fail once it is stopped.
    // The run's kernel streams are read only while its client keeps up (see `flow-gate.ts`).
    const startedAt = performance.now();
    const gate = new FlowGate();
    const runA2A = runs.clientFor(readThrough(gate, a2a), runs.enter(res));
    const { input, thread, threadReleased, run$, runLog } = await launchRun(req.body, req, res, runA2A, gate);
    // A client that left before its run ended (Stop): the next message on the thread may wait for this run to let go.
    const clientLeft = () => {
      if (!res.writableFinished && thread !== undefined && activeRuns.get(input.threadId) === thread) {
        leaving.add(input.threadId, threadReleased);
      }
    };
    if (res.closed) clientLeft();
    else res.once("close", clientLeft);
    // A bug: the sink ends the stream with RUN_ERROR INTERNAL_ERROR, or cannot end it at all.
    const failedOutside = (error: unknown) =>
      runLog.error({ ...errorFields(error), code: "INTERNAL_ERROR" }, "the run failed outside its pipeline");
    pipeToSse(metrics ? countRun(metrics, runKindOf(input), startedAt)(run$) : run$, res, failedOutside, {
      ...sse,
      ...(metrics ? { track: () => metrics.streamOpened("run") } : {}),
      encoding: negotiateEncoding(req),
      gate,
      stallMs: config.clientStallS * 1000,
      onSlowClient: (unsent) =>
        runLog.info({ unsentBytes: unsent }, `dropped a client that took nothing for ${config.clientStallS} s, as if it had left`),
    });
  };
  app.post("/", runs.refuseWhileDraining, ...jsonBody(MAX_RUN_BODY_BYTES), startRun);
  app.use(
    "/iac-code/handoff",
    handoffRoute({
      a2a,
      // The pending input an apply-input delivers: a run like any other, its events read by nobody (see `handoff-route.ts`).
      runInternally: async (body, req, res) => {
        const startedAt = performance.now();
        const { input, run$ } = await launchRun(body, req, res, runs.clientFor(a2a, runs.enter(res)));
        await lastValueFrom(metrics ? countRun(metrics, runKindOf(input), startedAt)(run$) : run$, { defaultValue: undefined });
      },
    }),
  );
  app.use("/extensions/iac-code/v1/executions", cancelRoute({ store, a2a, activeRuns }));
  // An observer by execution id and one by thread id watch alike.
  const observing = {
    store,
    a2a,
    hub,
    grace,
    endExecution,
    heartbeatMs: config.heartbeatMs,
    clientStallS: config.clientStallS,
    sse: observerSse,
  };
  app.use("/extensions/iac-code/v1/executions", subscribeRoute(observing));
  app.use("/extensions/iac-code/v1/threads", connectRoute(observing));

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
