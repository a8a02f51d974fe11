/**
 * The service as other tools start it: the built `dist/lib/main.js` in a
 * child process, configured only by IAC_CODE_AGUI_* variables, in front of
 * another A2A 1.0 kernel on loopback. `npm test` builds first.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { PROJECT_ROOT } from "../lib/paths.js";
import { startReplayKernel, type ReplayKernel } from "../lib/kernel/replay-kernel.js";
import { expectValidRun } from "./support/agui.js";
import { postRun, runInput } from "./support/service.js";

const MAIN = path.join(PROJECT_ROOT, "dist", "lib", "main.js");

function start(env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, [MAIN], { env: { PATH: process.env.PATH ?? "", ...env }, stdio: ["ignore", "pipe", "pipe"] });
}

/** The first stdout line, or the exit code if the process ends first. */
function firstLine(child: ChildProcess): Promise<{ line?: string; code?: number | null; stderr: string }> {
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => {
    createInterface({ input: child.stdout! }).once("line", (line) => resolve({ line, stderr }));
    child.once("exit", (code) => resolve({ code, stderr }));
  });
}

describe("the iac-code-agui command", () => {
  let kernel: ReplayKernel;
  const children: ChildProcess[] = [];
  beforeAll(async () => {
    if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run \`npm run build\` (npm test does)`);
    kernel = await startReplayKernel({ timeScale: 0, requireToken: "kernel-secret" });
  });
  afterAll(async () => {
    for (const child of children) child.kill("SIGTERM");
    await kernel.close();
  });

  it("serves runs against another kernel, configured by environment variables alone", async () => {
    const child = start({
      IAC_CODE_AGUI_HOST: "127.0.0.1",
      IAC_CODE_AGUI_PORT: "0",
      IAC_CODE_AGUI_A2A_URL: kernel.url,
      IAC_CODE_AGUI_A2A_TOKEN: "kernel-secret",
      IAC_CODE_AGUI_AUTH_TOKEN: "client-secret",
      IAC_CODE_AGUI_ALLOWED_CWDS: PROJECT_ROOT,
      IAC_CODE_AGUI_HEARTBEAT_MS: "15000",
      IAC_CODE_AGUI_INTERRUPT_TTL_S: "60",
      IAC_CODE_AGUI_STATE_DIR: mkdtempSync(path.join(os.tmpdir(), "agui-cli-")),
    });
    children.push(child);
    const { line, stderr } = await firstLine(child);
    expect(line).toMatch(
      new RegExp(`^iac-code-agui listening on http://127\\.0\\.0\\.1:\\d+ \\(kernel at ${kernel.url.replaceAll(".", "\\.")}\\)$`),
    );
    expect(stderr).toBe("");
    const url = /listening on (\S+)/.exec(line!)![1]!;

    const input = runInput("chat", {}, { cwd: PROJECT_ROOT });
    expect((await postRun(url, input)).status).toBe(401);
    const { events } = await postRun(url, input, { authorization: "Bearer client-secret" });
    await expectValidRun(events);
    expect(events.at(-1)).toMatchObject({ type: "RUN_FINISHED" });
    expect(kernel.received.at(-1)?.headers.authorization).toBe("Bearer kernel-secret");
  });

  it("refuses to start in front of a kernel that is not on loopback, saying why", async () => {
    const { code, stderr } = await firstLine(start({ IAC_CODE_AGUI_A2A_URL: "http://192.0.2.10:41242/" }));
    expect(code).toBe(2);
    expect(stderr).toMatch(/IAC_CODE_AGUI_A2A_URL must point at a loopback address/);
  });
});
