/**
 * The service under test, alone in its process, in front of the kernel URL
 * given as the first argument; the second is the heartbeat period (ms), and
 * any after it are further flags for the service.
 * Announces `{type: "ready", url}`; answers `{type: "stats", gc?}` with its
 * CPU and memory (after a full GC when asked; run it with --expose-gc).
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { writeHeapSnapshot } from "node:v8";
import { loadConfig } from "../lib/config.js";
import { silentLogger } from "../lib/log.js";
import { startService } from "../lib/server.js";
import { startTracing } from "../lib/tracing/start-tracing.js";
import { processStats } from "./support.js";

const [kernelUrl, heartbeatMs = "15000"] = process.argv.slice(2);
const stateDir = mkdtempSync(path.join(os.tmpdir(), "agui-bench-service-"));
// Through loadConfig, so new settings get their defaults here too; the environment is left out.
// The idle-streams bench holds 5,000 streams, past the default of 1,024 connections.
const config = loadConfig(
  [
    ...["--port", "0", "--a2a-url", kernelUrl!, "--state-dir", stateDir, "--heartbeat-ms", heartbeatMs, "--allowed-cwds", os.tmpdir()],
    ...["--max-connections", "10000"],
    // Further flags from the section that forks it (`instances.ts` gives `--redis-url`).
    ...process.argv.slice(4),
  ],
  {},
);
// As `main.ts` starts it: with traces off (no OTEL_* variables here), the trace context is still carried to the kernel.
if (process.env.BENCH_NO_TRACE_CONTEXT !== "1") await startTracing(process.env, silentLogger);
const service = await startService(config);
// A normal exit, so --cpu-prof can write its profile; on the way out the state directory goes, so a
// bench run leaves nothing in the temporary directory. With the bench gone (the IPC channel closed)
// nothing can stop this process any more: it ends too.
process.on("SIGTERM", () => process.exit(0));
process.on("disconnect", () => process.exit(0));
process.on("exit", () => rmSync(stateDir, { recursive: true, force: true }));
process.on("message", (message: { type: string; gc?: boolean }) => {
  if (message.type === "stats") process.send!({ type: "stats", ...processStats(message.gc ?? false) });
  // Profiling aid (bench/README.md): a heap snapshot of the service as it is now.
  if (message.type === "snapshot")
    process.send!({
      type: "snapshot",
      file: writeHeapSnapshot(path.join(os.tmpdir(), `agui-service-${process.pid}-${Date.now()}.heapsnapshot`)),
    });
});
process.send!({ type: "ready", url: service.url, stateDir });
