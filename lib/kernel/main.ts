#!/usr/bin/env node
/**
 * Runs the replay kernel on its own, as "another kernel on loopback":
 *   node dist/lib/kernel/main.js [--dialect 1.0|0.3] [--port N] [--host H] [--fixtures DIR] [--token T] [--time-scale X]
 * Then point the adapter at it with IAC_CODE_AGUI_A2A_URL=<printed URL>.
 * `--dialect 0.3` serves a stock A2A 0.3 agent instead (`lib/kernel-v03/`),
 * so a user can see the service in front of either.
 */
import path from "node:path";
import { DEFAULT_FIXTURE, listFixtures } from "./fixtures.js";
import { startReplayKernel, type ReplayKernelOptions } from "./replay-kernel.js";
import { FIXTURES_DIR } from "../paths.js";
import { DEFAULT_FIXTURE_V03, FIXTURES_V03_DIR, startReplayKernelV03 } from "../kernel-v03/replay-kernel.js";

// The port of the wire contract's default kernel URL (http://127.0.0.1:41242/),
// so the usual IAC_CODE_AGUI_A2A_URL works against this kernel unchanged.
const DEFAULT_PORT = 41242;

const DIALECTS = ["1.0", "0.3"] as const;
type Dialect = (typeof DIALECTS)[number];

const USAGE = `Usage: node dist/lib/kernel/main.js [--dialect 1.0|0.3] [--port N] [--host H] [--fixtures DIR] [--token T] [--time-scale X]
  --dialect     the A2A version to speak (default 1.0): 1.0 replays the iac-code kernel's streams
                (examples/fixtures); 0.3 is a stock @a2a-js/sdk 0.3 agent with no iac-code metadata
                (examples/fixtures-v03)
  --port        TCP port (default ${DEFAULT_PORT}; 0 picks a free one)
  --host        address to bind (default 127.0.0.1)
  --fixtures    directory of <name>.jsonl fixtures (default examples/fixtures, or examples/fixtures-v03 with --dialect 0.3)
  --token       require "Authorization: Bearer <token>" on every JSON-RPC call and recovery request
  --time-scale  multiply every recorded delay (0 replays instantly)`;

interface KernelArgs extends ReplayKernelOptions {
  dialect: Dialect;
}

function parseArgs(argv: readonly string[]): KernelArgs {
  const options: KernelArgs = { dialect: "1.0", port: DEFAULT_PORT };
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
      case "--dialect":
        if (!(DIALECTS as readonly string[]).includes(value)) throw new Error(`--dialect must be 1.0 or 0.3, got "${value}"`);
        options.dialect = value as Dialect;
        break;
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
  const { dialect, ...options } = parseArgs(process.argv.slice(2));
  const v03 = dialect === "0.3";
  const kernel = v03 ? await startReplayKernelV03(options) : await startReplayKernel(options);
  const fixtures = await listFixtures(options.fixturesDir ?? (v03 ? FIXTURES_V03_DIR : FIXTURES_DIR));
  const fallback = v03 ? DEFAULT_FIXTURE_V03 : DEFAULT_FIXTURE;
  console.log(`A2A ${dialect} replay kernel listening on ${kernel.url}`);
  console.log(`Fixtures (type one as the message text; anything else plays "${fallback}"): ${fixtures.join(", ") || "(none)"}`);
  const stop = () => void kernel.close().then(() => process.exit(0));
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
