/**
 * The service as other tools start it: the built `dist/lib/main.js` in a
 * child process, configured only by IAC_CODE_AGUI_* variables, in front of
 * another A2A 1.0 kernel on loopback. `npm test` builds first. Its log is
 * JSON lines on stdout; with no warning about its settings, the first one
 * says where it listens.
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

/** The first stdout line, or the exit code if the process ends first; `lines` keeps every stdout line that follows. */
function firstLine(child: ChildProcess): Promise<{ line?: string; code?: number | null; stderr: string; lines: string[] }> {
  let stderr = "";
  const lines: string[] = [];
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => {
    createInterface({ input: child.stdout! }).on("line", (line) => {
      lines.push(line);
      if (lines.length === 1) resolve({ line, stderr, lines });
    });
    child.once("exit", (code) => resolve({ code, stderr, lines }));
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
      IAC_CODE_AGUI_LOG_LEVEL: "debug",
    });
    children.push(child);
    const { line, stderr, lines } = await firstLine(child);
    const listening = JSON.parse(line!) as Record<string, unknown>;
    expect(listening).toMatchObject({
      level: "info",
      time: expect.stringMatching(/^\d{4}-\d\d-\d\dT[\d:.]+Z$/),
      url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
      kernelUrl: kernel.url,
      // What it is in front of, from the agent card, on the same first line.
      a2aDialect: "1.0",
      agentName: expect.any(String),
    });
    // The sandbox is on by default, and the first line says where to open it.
    expect(listening.sandboxUrl).toBe(`${String(listening.url)}/sandbox`);
    expect(listening.msg).toBe(
      `iac-code-agui listening on ${String(listening.url)} (kernel at ${kernel.url}, an A2A 1.0 agent); the sandbox at ${String(listening.url)}/sandbox`,
    );
    expect(stderr).toBe("");
    const url = listening.url as string;

    const input = runInput("chat", {}, { cwd: PROJECT_ROOT });
    expect((await postRun(url, input)).status).toBe(401);
    const { events } = await postRun(url, input, { authorization: "Bearer client-secret" });
    await expectValidRun(events);
    expect(events.at(-1)).toMatchObject({ type: "RUN_FINISHED" });
    expect(kernel.received.at(-1)?.headers.authorization).toBe("Bearer kernel-secret");

    // The refused request is in the log, once, by its code; neither token is.
    const records = lines.map((text) => JSON.parse(text) as Record<string, unknown>);
    expect(records.filter((record) => record.code === "UNAUTHORIZED")).toEqual([
      expect.objectContaining({ level: "info", method: "POST", path: "/", status: 401 }),
    ]);
    expect(lines.join("\n")).not.toMatch(/client-secret|kernel-secret/);
  });

  it("refuses to start in front of a kernel that is not on loopback, saying why", async () => {
    const { code, stderr } = await firstLine(start({ IAC_CODE_AGUI_A2A_URL: "http://192.0.2.10:41242/" }));
    expect(code).toBe(2);
    expect(stderr).toMatch(/IAC_CODE_AGUI_A2A_URL must point at a loopback address/);
  });
});
