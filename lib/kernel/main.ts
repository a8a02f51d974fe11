#!/usr/bin/env node
/**
 * Runs the replay kernel on its own, as "another kernel on loopback":
 *   node dist/lib/kernel/main.js [--port N] [--host H] [--fixtures DIR] [--token T] [--time-scale X]
 * Then point the adapter at it with IAC_CODE_AGUI_A2A_URL=<printed URL>.
 */
import path from "node:path";
import { listFixtures } from "./fixtures.js";
import { startReplayKernel, type ReplayKernelOptions } from "./replay-kernel.js";
import { FIXTURES_DIR } from "../paths.js";

// The port of the wire contract's default kernel URL (http://127.0.0.1:41242/),
// so the usual IAC_CODE_AGUI_A2A_URL works against this kernel unchanged.
const DEFAULT_PORT = 41242;

const USAGE = `Usage: node dist/lib/kernel/main.js [--port N] [--host H] [--fixtures DIR] [--token T] [--time-scale X]
  --port        TCP port (default ${DEFAULT_PORT}; 0 picks a free one)
  --host        address to bind (default 127.0.0.1)
  --fixtures    directory of <name>.jsonl fixtures (default examples/fixtures)
  --token       require "Authorization: Bearer <token>" on every JSON-RPC call and recovery request
  --time-scale  multiply every recorded delay (0 replays instantly)`;

function parseArgs(argv: readonly string[]): ReplayKernelOptions {
  const options: ReplayKernelOptions = { port: DEFAULT_PORT };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i]!.split(/=(.*)/s, 2);
    if (flag === "--help" || flag === "-h") {
      console.log(USAGE);
      process.exit(0);
    }
    const value = inline ?? argv[++i];
    if (value === undefined) throw new Error(`${flag} needs a value\n${USAGE}`);
    const number = () => {
      const n = Number(value);
      if (!Number.isFinite(n) || n < 0) throw new Error(`${flag} must be a number ≥ 0, got "${value}"`);
      return n;
    };
    switch (flag) {
      case "--port":
        options.port = number();
        break;
      case "--host":
        options.host = value;
        break;
      case "--fixtures":
        options.fixturesDir = path.resolve(value);
        break;
      case "--token":
        options.requireToken = value;
        break;
      case "--time-scale":
        options.timeScale = number();
        break;
      default:
        throw new Error(`unknown flag ${flag}\n${USAGE}`);
    }
  }
  return options;
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  const kernel = await startReplayKernel(options);
  const fixtures = await listFixtures(options.fixturesDir ?? FIXTURES_DIR);
  console.log(`A2A replay kernel listening on ${kernel.url}`);
  console.log(`Fixtures (type one as the message text; anything else plays "chat"): ${fixtures.join(", ") || "(none)"}`);
  const stop = () => void kernel.close().then(() => process.exit(0));
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
