#!/usr/bin/env node
/**
 * `iac-code-agui [flags]`: configuration from flags and environment (see
 * `config.ts`). Once the configuration is read, everything the command says
 * is a JSON log record on stdout (see `log.ts`): warnings about the
 * settings, the start of the kernel when it runs one
 * (`IAC_CODE_AGUI_KERNEL_COMMAND`, `component: "kernel"`), then where it
 * listens (`url`). A configuration it cannot start with is told as one plain
 * line on stderr, with exit code 2: that is for whoever typed the command.
 * `--help` prints every flag (see `usage`), `--version` the version, on
 * stdout, and neither starts anything.
 */
import { ConfigError, loadConfig, usage } from "./config.js";
import { adoptLegacyThreads } from "./config/legacy-state-dir.js";
import { defaultStateDir, legacyStateDir } from "./config/settings.js";
import { createLogger, type Logger } from "./log.js";
import { KernelStartError } from "./kernel-process/supervisor.js";
import { ListenError, startService } from "./server.js";
import { startTracing } from "./tracing/start-tracing.js";
import { SERVICE_VERSION } from "./version.js";

/** Warnings about the configuration, told once the logger exists (or with the error that stops the start). */
const configWarnings: string[] = [];
let log: Logger | undefined;

/** `--help` or `--version` anywhere among the arguments answers it, whatever else they say. */
function answeredAlone(argv: readonly string[]): boolean {
  if (argv.includes("--help") || argv.includes("-h")) {
    console.log(usage());
    return true;
  }
  if (argv.includes("--version") || argv.includes("-v")) {
    console.log(SERVICE_VERSION);
    return true;
  }
  return false;
}

async function main(): Promise<void> {
  if (answeredAlone(process.argv.slice(2))) return;
  const config = loadConfig(process.argv.slice(2), process.env, (warning) => configWarnings.push(warning));
  const logger = (log = createLogger({ level: config.logLevel }));
  for (const warning of configWarnings.splice(0)) logger.warn(warning);
  // Threads an earlier version kept in its default directory are copied into the new default one (see `legacy-state-dir.ts`).
  if (config.redisUrl === undefined && config.stateDir === defaultStateDir(process.env)) {
    const adopted = await adoptLegacyThreads(config.stateDir, legacyStateDir(process.env));
    if (adopted)
      logger.info(
        { ...adopted, stateDir: config.stateDir },
        `copied ${adopted.copied} thread(s) from ${adopted.from}, the earlier default state directory`,
      );
  }
  // Before the service: the first request's span needs the tracer provider (or, traces off, the trace context's carrier).
  const tracing = await startTracing(process.env, logger);
  const service = await startService(config, { log: logger });
  const kernel = service.embeddedKernel
    ? `embedded demo kernel at ${service.kernelUrl}`
    : service.kernelProcess
      ? `${config.kernel === "iac-code" ? "iac-code a2a" : "kernel of IAC_CODE_AGUI_KERNEL_COMMAND"} at ${service.kernelUrl}`
      : `kernel at ${service.kernelUrl}`;
  const { agent } = service;
  // Named where a person starting the service looks first, so the debugging page is found without the docs.
  const sandboxUrl = config.sandbox === "off" ? undefined : `${service.url}/sandbox`;
  // One start record, the first line an operator's script waits for: where it listens and what it is in front of.
  logger.info(
    {
      url: service.url,
      kernelUrl: service.kernelUrl,
      embeddedKernel: service.embeddedKernel !== undefined,
      a2aDialect: agent.dialect,
      agentName: agent.name,
      agentVersion: agent.version,
      tracesExported: tracing.exporting,
      ...(sandboxUrl ? { sandboxUrl } : {}),
    },
    `iac-code-agui listening on ${service.url} (${kernel}, an A2A ${agent.dialect} agent)${sandboxUrl ? `; the sandbox at ${sandboxUrl}` : ""}`,
  );
  // The first signal drains (see `RunningService.shutdown`); a second one stops the runs still going at once.
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.warn({ signal }, `${signal} again: stopping the runs still going now`);
      void service.shutdown({ drainMs: 0 });
      return;
    }
    stopping = true;
    logger.info({ signal }, `${signal} received`);
    // The drained runs' last spans are sent before the process exits.
    service
      .shutdown()
      .then(() => tracing.shutdown())
      .then(
        () => process.exit(0),
        (error: unknown) => {
          logger.fatal({ err: error }, "shutdown failed");
          process.exit(1);
        },
      );
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  const idleS = config.idleShutdown ?? 0;
  if (idleS > 0) {
    // Checked a few times per idle window, at most every 5 s; a run or a request in between starts the count again.
    const watch = setInterval(
      () => {
        if (stopping || service.idleMs() < idleS * 1000) return;
        clearInterval(watch);
        logger.info({ idleShutdownS: idleS }, `idle for ${idleS} s: shutting down (IAC_CODE_AGUI_IDLE_SHUTDOWN)`);
        stop("SIGTERM");
      },
      Math.min(5000, Math.max(100, (idleS * 1000) / 4)),
    );
    watch.unref();
  }
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    for (const warning of configWarnings) console.error(`iac-code-agui: warning: ${warning}`);
    console.error(`iac-code-agui: ${error.message}`);
    process.exit(2);
  }
  const logger = log ?? createLogger();
  // A listen error's message names the address and what to do, a kernel start's what the kernel did; any other is a bug,
  // told by its type and stack.
  const told = error instanceof ListenError || error instanceof KernelStartError;
  logger.fatal({ err: error }, told ? error.message : "failed to start");
  process.exit(1);
});
