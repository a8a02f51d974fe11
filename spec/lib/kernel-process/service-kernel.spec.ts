/**
 * Demo code stays demo: a service in front of a kernel it was given (a URL,
 * or a command it runs) loads no demo-kernel code and no A2A server, neither
 * as it starts nor while it serves a run, the sandbox's fixture list and a
 * sandbox replay. The demo kernels, and with them `@a2a-js/sdk/server` and
 * the 0.3 SDK's server, are imported only when the service starts one.
 *
 * Told by the built service (`dist/lib/main.js`, `npm test` builds it) in a
 * child process preloaded with `import-trace.mjs`, which writes down every
 * module it resolves. A service that starts its own 0.3 demo kernel is the
 * control: it loads all four, so the patterns do match what they look for.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { EventType } from "@ag-ui/core";
import { startReplayKernel, type ReplayKernel } from "../../../lib/kernel/replay-kernel.js";
import { FIXTURES_DIR, PROJECT_ROOT } from "../../../lib/paths.js";
import { MAIN, parseSse } from "../../support/service-process.js";
import { postRun, runInput } from "../../support/service.js";

const IMPORT_TRACE = path.join(PROJECT_ROOT, "spec", "support", "import-trace.mjs");
const DEMO_KERNEL = path.join(PROJECT_ROOT, "dist", "lib", "kernel", "main.js");

/** What only a demo kernel needs, by where its modules resolve to. */
const DEMO_ONLY: Record<string, RegExp> = {
  "the A2A 1.0 demo kernel": /\/dist\/lib\/kernel\//,
  "the A2A 0.3 demo kernel": /\/dist\/lib\/kernel-v03\//,
  "@a2a-js/sdk's server": /\/node_modules\/@a2a-js\/sdk\/dist\/server\//,
  "the 0.3 SDK's server": /\/node_modules\/a2a-sdk-v03\/dist\/server\//,
};

/** What the service reads a fixture with: shared with the demo kernels, and free of their code. */
const FIXTURE_FORMAT = /\/dist\/lib\/fixtures\/fixture-format\.js$/;

interface TracedService {
  url: string;
  /** Every module URL the process has resolved so far. */
  resolved(): string[];
  stop(): Promise<void>;
}

/** `dist/lib/main.js` with the import trace, configured by `env`; resolves once its log says where it listens. */
async function startTracedService(env: Record<string, string>): Promise<TracedService> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "agui-import-trace-"));
  const traceFile = path.join(dir, "resolved.txt");
  const child = spawn(process.execPath, ["--import", IMPORT_TRACE, MAIN], {
    env: {
      PATH: process.env.PATH ?? "",
      IMPORT_TRACE_FILE: traceFile,
      IAC_CODE_AGUI_HOST: "127.0.0.1",
      IAC_CODE_AGUI_PORT: "0",
      IAC_CODE_AGUI_STATE_DIR: path.join(dir, "state"),
      IAC_CODE_AGUI_DRAIN_S: "0",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on("line", (line) => {
      output += `${line}\n`;
      const record = JSON.parse(line) as { msg: string; url?: unknown };
      if (/listening on/.test(record.msg) && typeof record.url === "string") resolve(record.url);
    });
    void exited.then(() => reject(new Error(`the service exited before listening:\n${output}`)));
  });
  return {
    url,
    resolved: () => readFileSync(traceFile, "utf8").split("\n").filter(Boolean),
    async stop() {
      child.kill("SIGTERM");
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The names of `DEMO_ONLY` whose pattern some resolved URL matches. */
const demoCodeIn = (resolved: readonly string[]) =>
  Object.entries(DEMO_ONLY).flatMap(([name, pattern]) => (resolved.some((url) => pattern.test(url)) ? [name] : []));

/** A run, the sandbox's fixture list and a sandbox replay: what a service serves, each with the code it loads. */
async function serveOnce(url: string): Promise<void> {
  const run = await postRun(url, runInput("chat"));
  expect(run.events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED });
  expect((await fetch(new URL("sandbox/fixtures", url))).status).toBe(200);
  const replay = await fetch(new URL("sandbox/replay", url), {
    method: "POST",
    headers: { "content-type": "application/json", accept: "text/event-stream" },
    body: JSON.stringify({ fixture: readFileSync(path.join(FIXTURES_DIR, "chat.jsonl"), "utf8"), timeScale: 0 }),
  });
  expect((await parseSse(await replay.text())).at(-1)).toMatchObject({ type: EventType.RUN_FINISHED });
}

describe("a service in front of a kernel it was given", () => {
  let kernel: ReplayKernel;
  beforeAll(async () => {
    for (const file of [MAIN, DEMO_KERNEL]) {
      if (!existsSync(file)) throw new Error(`${file} is missing: run \`npm run build\` (npm test does)`);
    }
    kernel = await startReplayKernel({ timeScale: 0 });
  });
  afterAll(() => kernel.close());

  it.each([
    ["at a URL", () => ({ IAC_CODE_AGUI_A2A_URL: kernel.url })],
    ["run by a command", () => ({ IAC_CODE_AGUI_KERNEL_COMMAND: `'${process.execPath}' '${DEMO_KERNEL}' --port {port} --time-scale 0` })],
  ])("%s loads no demo-kernel or A2A server code, serving a run and the sandbox", async (_mode, env) => {
    const service = await startTracedService(env());
    try {
      await serveOnce(service.url);
      const resolved = service.resolved();
      expect(resolved).toContainEqual(expect.stringMatching(FIXTURE_FORMAT));
      expect(demoCodeIn(resolved)).toEqual([]);
    } finally {
      await service.stop();
    }
  });

  it("is told apart from one that starts its own demo kernel, which loads all of it", async () => {
    const service = await startTracedService({ IAC_CODE_AGUI_A2A_DIALECT: "0.3" });
    try {
      expect(demoCodeIn(service.resolved())).toEqual(Object.keys(DEMO_ONLY));
    } finally {
      await service.stop();
    }
  });
});
