/**
 * Starts the service: the HTTP app on its port, in front of the configured
 * kernel — the one at `IAC_CODE_AGUI_A2A_URL`, the one it runs itself from
 * `IAC_CODE_AGUI_KERNEL_COMMAND`, or, with neither, the embedded demo
 * kernel, which it starts on a loopback port and reaches over HTTP like any
 * other kernel (see `kernel-process/service-kernel.ts`).
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { A2AClient } from "./a2a/client.js";
import { AgentCardSource, type KernelAgent } from "./a2a/dialect.js";
import { DEFAULT_HISTORY_BUDGET_BYTES, DEFAULT_HISTORY_PROCESS_BUDGET_BYTES, HistoryReads } from "./a2a/history-budget.js";
import { DEFAULT_KERNEL_REQUEST_TIMEOUT_S } from "./a2a/limits.js";
import type { Config } from "./config.js";
import { AguiError } from "./errors.js";
import { createApp, type AppDependencies } from "./http/app.js";
import { appBornClasses } from "./http/app-born-classes.js";
import { CONNECTIONS_CHECK_MS, guardConnections, HEADERS_TIMEOUT_MS } from "./http/connection-guard.js";
import { silentLogger, type Logger } from "./log.js";
import { ServiceMetrics } from "./metrics/service-metrics.js";
import { instrumentedKernel, instrumentedStore } from "./metrics/instrumented.js";
import { DEFAULT_SETTLE_MS, type DrainReport } from "./runs/run-registry.js";
import { Runs, type RunsDependencies } from "./runs/runs.js";
import { RunSlots, redisUserRuns } from "./runs/run-slots.js";
import { DEFAULT_LEASE_TTL_MS } from "./state/lease-ttl.js";
import { recorderOf, recordingClient } from "./recorder/recording-client.js";
import type { ReplayKernel } from "./kernel/replay-kernel.js";
import type { ReplayKernelV03 } from "./kernel-v03/replay-kernel.js";
import { startServiceKernel } from "./kernel-process/service-kernel.js";
import type { KernelProcess, KernelProcessOptions } from "./kernel-process/supervisor.js";
import { kernelFixtures } from "./http/kernel-fixtures.js";
import { readinessChecks } from "./http/probes.js";
import { FileThreadStore } from "./state/file-thread-store.js";
import { openThreadStore } from "./state/open-thread-store.js";
import { redisSharedThreads } from "./threads/shared-threads-redis.js";
import type { ThreadStore } from "./state/thread-store.js";

export interface RunningService {
  url: string;
  kernelUrl: string;
  /** Set when the service started its own demo kernel. */
  embeddedKernel: ReplayKernel | ReplayKernelV03 | undefined;
  /** Set when the service runs its kernel (`IAC_CODE_AGUI_KERNEL_COMMAND`); stopped when the service closes. */
  kernelProcess: KernelProcess | undefined;
  /** The agent its card named at start (a restarted kernel's card is read again; `/health` has the current one). */
  agent: KernelAgent;
  /** Stops at once: every connection is cut, runs in flight included. */
  close(): Promise<void>;
  /**
   * Stops gracefully (SIGTERM, SIGINT): no new run is accepted (503
   * `SERVICE_UNAVAILABLE` with Retry-After), runs in flight get `drainMs`
   * (default `IAC_CODE_AGUI_DRAIN_S`) to end, each one still going then ends
   * with RUN_ERROR `SERVICE_SHUTTING_DOWN` and its task cancelled, the
   * recorder's last files are written, and the service closes. Runs paused
   * at interrupts stay on disk as they are. Called again while it runs,
   * with `drainMs: 0`, it ends the drain window now.
   */
  shutdown(options?: { drainMs?: number }): Promise<DrainReport>;
  /** How long no request has been open, probes aside, in milliseconds; 0 while one is (see IAC_CODE_AGUI_IDLE_SHUTDOWN). */
  idleMs(): number;
}

/** The service could not listen on its address: one line that names it, for the command to print. */
export class ListenError extends Error {
  override name = "ListenError";
}

function listenError(error: unknown, address: string): unknown {
  const reasons: Record<string, string> = {
    EADDRINUSE: "is already in use: stop what listens there, or choose another IAC_CODE_AGUI_PORT (--port)",
    EACCES: "needs privileges this process does not have",
    EADDRNOTAVAIL: "is not an address of this machine",
  };
  const reason = reasons[(error as NodeJS.ErrnoException).code ?? ""];
  return reason === undefined ? error : new ListenError(`${address} ${reason}.`, { cause: error });
}

export interface ServiceOptions {
  /** Where the service's records go (see `log.ts`); none without it. */
  log?: Logger;
  /** Tests: another store (one that fails on demand, say) or clock. */
  store?: ThreadStore;
  now?: () => number;
  /** Embedding and tests: the SSE sink's high-water mark (default 256 KiB unsent), and a look at its pressure. */
  sse?: AppDependencies["sse"];
  /** Tests and tracing: wraps each stage of every run\'s chain (see `RunPorts.instrument`). */
  instrument?: RunsDependencies["instrument"];
  /** Tests: how a kernel the service runs is restarted and stopped, and what happens to it. */
  kernelSupervision?: Pick<KernelProcessOptions, "restart" | "stopGraceMs" | "onEvent">;
}

export async function startService(
  config: Config,
  { log = silentLogger, store, now, sse, instrument, kernelSupervision }: ServiceOptions = {},
): Promise<RunningService> {
  // A restarted kernel may be another agent (a new version, another dialect): its card is read again.
  let agentCard: AgentCardSource | undefined;
  const supervision: ServiceOptions["kernelSupervision"] = {
    ...kernelSupervision,
    onEvent: (event) => {
      if (event.type === "ready") agentCard?.refresh();
      kernelSupervision?.onEvent?.(event);
    },
  };
  const kernel = await startServiceKernel(config, { log: log.child({ component: "kernel" }), supervision });
  const kernelUrl = kernel.url;
  // A kernel run by name has a token of its own; any other is reached with IAC_CODE_AGUI_A2A_TOKEN.
  const kernelToken = kernel.token ?? config.a2aToken;
  const card = new AgentCardSource({ kernelUrl, token: kernelToken, setting: config.a2aDialect ?? "auto" });
  agentCard = card;
  const agent = await card.agent();
  const a2a = recordingClient(
    new A2AClient({
      url: kernelUrl,
      ...(kernelToken ? { token: kernelToken } : {}),
      maxRecordBytes: config.maxKernelRecordBytes,
      maxResponseBytes: config.maxKernelResponseBytes,
      requestTimeoutMs: (config.kernelRequestTimeoutS ?? DEFAULT_KERNEL_REQUEST_TIMEOUT_S) * 1000,
      ...(config.kernelFirstByteTimeoutS === undefined ? {} : { firstByteTimeoutMs: config.kernelFirstByteTimeoutS * 1000 }),
      dialect: card,
    }),
    config.recordDir,
    {
      log: log.child({ component: "recorder" }),
      secrets: [kernelToken, config.authToken],
    },
  );
  // The file store, or Redis when IAC_CODE_AGUI_REDIS_URL is set (see `state/open-thread-store.ts`); a test's store is its own.
  const opened = store
    ? undefined
    : await openThreadStore(config, log.child({ component: "state" }), {
        // Sweeps run on a timer, so never before `metrics` below exists.
        onThreadsRemoved: (count) => metrics.threadsRemoved.inc(count),
      });
  // Instances on one Redis share what observers watch and the disconnect grace window too (see `threads/shared-threads-redis.ts`).
  const sharedThreads =
    opened?.redis && redisSharedThreads({ client: opened.redis.client, log: log.child({ component: "shared-threads" }) });
  // Its own registry, with the process's metrics: services in one process (tests, embedders) count apart.
  const metrics = new ServiceMetrics({ processMetrics: true });
  // Every run sees them timed: the kernel's calls and the store's operations, whichever store it is.
  const timedKernel = instrumentedKernel(a2a, metrics);
  // Per user across instances when they share a Redis; a slot lapses with the lease TTL, as a dead instance's threads do.
  const slots = new RunSlots(config, {
    shared: opened?.redis && redisUserRuns({ client: opened.redis.client, ttlMs: config.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS }),
    log: log.child({ component: "run-slots" }),
    onRefused: (limit) => metrics.runsRefused.inc({ limit }),
  });
  const runs = new Runs({
    config,
    slots,
    historyReads: new HistoryReads({
      requestBytes: config.historyBudgetBytes ?? DEFAULT_HISTORY_BUDGET_BYTES,
      processBytes: config.historyProcessBudgetBytes ?? DEFAULT_HISTORY_PROCESS_BUDGET_BYTES,
    }),
    a2a: timedKernel,
    store: instrumentedStore(store ?? opened!.store, metrics),
    metrics,
    log,
    ...(now ? { now } : {}),
    ...(instrument ? { instrument } : {}),
    ...(sharedThreads ? { sharedThreads } : {}),
  });
  const inFlight = runs.registry;
  const app = createApp({
    config,
    runs,
    a2a: timedKernel,
    readiness: readinessChecks({
      kernelUrl,
      kernelToken,
      threadsDir: new FileThreadStore({ stateDir: config.stateDir }).threadsDir,
      ...(opened?.available ? { stateAvailable: opened.available } : {}),
      draining: () => inFlight.draining,
      agent: () => card.known(),
    }),
    log,
    metrics,
    threadStore: store ?? opened!.store,
    kernelFixtures: kernelFixtures({
      url: kernelUrl,
      token: kernelToken,
      maxResponseBytes: config.maxKernelResponseBytes,
      timeoutMs: (config.kernelRequestTimeoutS ?? DEFAULT_KERNEL_REQUEST_TIMEOUT_S) * 1000,
    }),
    ...(sse ? { sse } : {}),
  });

  const host = config.host.includes(":") ? `[${config.host}]` : config.host;
  const server = createServer(
    { headersTimeout: HEADERS_TIMEOUT_MS, connectionsCheckingInterval: CONNECTIONS_CHECK_MS, ...appBornClasses(app) },
    app,
  );
  // Set before the first connection can be accepted: past the limit a new connection makes room by closing
  // the longest idle one, or is closed itself (see `http/connection-guard.ts`).
  guardConnections(server, config.maxConnections);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(config.port, config.host, () => {
      server.off("error", reject);
      resolve();
    });
  }).catch(async (error: unknown) => {
    await kernel.close();
    await sharedThreads?.close();
    await opened?.close();
    throw listenError(error, `${host}:${config.port}`);
  });
  const { port } = server.address() as AddressInfo;
  // Requests open now and when the last one closed: a probe every few seconds does not keep an idle service up.
  let openRequests = 0;
  let lastActivityAt = Date.now();
  // One function for every response, added with `on` (`close` comes once): a closure and a `once` wrapper per request
  // would live as long as its stream.
  const requestClosed = () => {
    openRequests--;
    lastActivityAt = Date.now();
  };
  server.on("request", (req: import("node:http").IncomingMessage, res: import("node:http").ServerResponse) => {
    if (/^\/(health|ready)(\?|$)/.test(req.url ?? "")) return;
    openRequests++;
    res.on("close", requestClosed);
  });

  const close = async () => {
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
    // After the drain, which needs the kernel and the store.
    await kernel.close();
    await sharedThreads?.close();
    await opened?.close();
  };
  let shuttingDown: Promise<DrainReport> | undefined;
  const shutdown = async (drainMs: number): Promise<DrainReport> => {
    log.info(
      { inFlight: inFlight.size, drainMs },
      `shutting down: draining ${runsCount(inFlight.size)} for up to ${drainMs / 1000} s; new runs are refused`,
    );
    const report = await inFlight.drain({ windowMs: drainMs, reason: new AguiError("SERVICE_SHUTTING_DOWN") });
    // The runs whose clients left are still writing their ends: the process exits after this.
    await runs.settled(DEFAULT_SETTLE_MS);
    await recorderOf(a2a)?.idle();
    log.info(
      { ...report },
      `shutdown: ${runsCount(report.ended)} ended within the drain window, ${runsCount(report.stopped)} stopped with SERVICE_SHUTTING_DOWN; ` +
        "threads paused at interrupts stay on disk",
    );
    await close();
    return report;
  };

  return {
    url: `http://${host}:${port}`,
    kernelUrl,
    embeddedKernel: kernel.embedded,
    kernelProcess: kernel.process,
    agent,
    close,
    idleMs: () => (openRequests > 0 || inFlight.size > 0 ? 0 : Date.now() - lastActivityAt),
    shutdown({ drainMs = config.drainS * 1000 } = {}) {
      if (shuttingDown && drainMs === 0) inFlight.endWindowNow();
      shuttingDown ??= shutdown(drainMs);
      return shuttingDown;
    },
  };
}

const runsCount = (count: number) => `${count} run${count === 1 ? "" : "s"}`;
