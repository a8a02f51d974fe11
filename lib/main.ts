#!/usr/bin/env node
/** `iac-code-agui [flags]`: configuration from flags and environment (see `config.ts`). */
import { ConfigError, loadConfig } from "./config.js";
import { ListenError, startService } from "./server.js";

const log = (message: string, error?: unknown) =>
  console.error(`[iac-code-agui] ${message}${error instanceof Error ? `: ${error.message}` : ""}`);

async function main(): Promise<void> {
  const config = loadConfig(process.argv.slice(2));
  const service = await startService(config, { log });
  const kernel = service.embeddedKernel ? `embedded demo kernel at ${service.kernelUrl}` : `kernel at ${service.kernelUrl}`;
  console.log(`iac-code-agui listening on ${service.url} (${kernel})`);
  // The first signal drains (see `RunningService.shutdown`); a second one stops the runs still going at once.
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) {
      log(`${signal} again: stopping the runs still going now`);
      void service.shutdown({ drainMs: 0 });
      return;
    }
    stopping = true;
    log(`${signal} received`);
    service.shutdown().then(
      () => process.exit(0),
      (error: unknown) => {
        log("shutdown failed", error);
        process.exit(1);
      },
    );
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    console.error(`iac-code-agui: ${error.message}`);
    process.exit(2);
  }
  if (error instanceof ListenError) {
    console.error(`iac-code-agui: ${error.message}`);
    process.exit(1);
  }
  log("failed to start", error);
  process.exit(1);
});
