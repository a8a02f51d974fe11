/**
 * How the built command starts, or refuses to (issue 11): a token set but
 * empty, a token with spaces around it, a port already taken. Like
 * `spec/cli.spec.ts`, the service runs as `dist/lib/main.js` in a child
 * process; `npm test` builds first.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { ConfigError, loadConfig } from "../../lib/config.js";
import { PROJECT_ROOT } from "../../lib/paths.js";
import { expectValidRun } from "../support/agui.js";
import { postRun, runInput, waitFor } from "../support/service.js";

const MAIN = path.join(PROJECT_ROOT, "dist", "lib", "main.js");
// Nothing listens there: none of these cases reaches a kernel, and none starts the embedded one.
const NO_KERNEL = "http://127.0.0.1:9/";

const children: ChildProcess[] = [];

function start(env: Record<string, string>, args: string[] = []): ChildProcess {
  const child = spawn(process.execPath, [MAIN, ...args], {
    env: { PATH: process.env.PATH ?? "", IAC_CODE_AGUI_STATE_DIR: mkdtempSync(path.join(os.tmpdir(), "agui-cli-hardening-")), ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  return child;
}

/** Resolves once the command's log (JSON lines on stdout) says where it listens: the records so far, and its stderr. */
function startedProcess(child: ChildProcess): Promise<{ url: string; records: Array<Record<string, unknown>>; stderr: () => string }> {
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const records: Array<Record<string, unknown>> = [];
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout! }).on("line", (line) => {
      const record = JSON.parse(line) as Record<string, unknown>;
      records.push(record);
      if (typeof record.url === "string") resolve({ url: record.url, records, stderr: () => stderr });
    });
    child.once("exit", (code) => reject(new Error(`exited (${code}) before listening: ${stderr}`)));
  });
}

/** The first stdout line, or the exit code if the process ends first; stderr as read by then. */
function firstLine(child: ChildProcess): Promise<{ line?: string; code?: number | null; stderr: string }> {
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => {
    createInterface({ input: child.stdout! }).once("line", (line) => resolve({ line, stderr }));
    child.once("exit", (code) => resolve({ code, stderr }));
  });
}

beforeAll(() => {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run \`npm run build\` (npm test does)`);
});
afterAll(() => {
  for (const child of children) if (child.exitCode === null) child.kill("SIGTERM");
});

describe("an auth token set but empty", () => {
  it("is refused by loadConfig, from the environment and from the flag", () => {
    expect(() => loadConfig([], { IAC_CODE_AGUI_AUTH_TOKEN: "" })).toThrow(ConfigError);
    expect(() => loadConfig([], { IAC_CODE_AGUI_AUTH_TOKEN: "   " })).toThrow(/IAC_CODE_AGUI_AUTH_TOKEN/);
    expect(() => loadConfig(["--auth-token="], {})).toThrow(/--auth-token/);
    expect(loadConfig([], {}).authToken).toBeUndefined();
  });

  it.each([
    ["IAC_CODE_AGUI_AUTH_TOKEN=", { IAC_CODE_AGUI_AUTH_TOKEN: "" }, []],
    ["--auth-token=", {}, ["--auth-token="]],
    ["--auth-token ''", {}, ["--auth-token", ""]],
  ])("stops the command at start (%s), saying so, rather than serving without auth", async (_name, env, args) => {
    const { line, code, stderr } = await firstLine(start({ IAC_CODE_AGUI_PORT: "0", IAC_CODE_AGUI_A2A_URL: NO_KERNEL, ...env }, args));
    expect(line).toBeUndefined();
    expect(code).toBe(2);
    expect(stderr).toMatch(/AUTH_TOKEN|--auth-token/);
    expect(stderr).toMatch(/empty/);
  });
});

describe("an auth token with spaces around it", () => {
  it("is warned about in the log, and used without them (a header value cannot carry them)", async () => {
    const warnings: string[] = [];
    expect(loadConfig([], { IAC_CODE_AGUI_AUTH_TOKEN: " padded\t" }, (message) => warnings.push(message)).authToken).toBe("padded");
    expect(warnings).toEqual([expect.stringMatching(/IAC_CODE_AGUI_AUTH_TOKEN.*(space|whitespace)/)]);

    const child = start({
      IAC_CODE_AGUI_PORT: "0",
      IAC_CODE_AGUI_AUTH_TOKEN: "  client-secret ",
      IAC_CODE_AGUI_ALLOWED_CWDS: os.tmpdir(),
    });
    const listening = await startedProcess(child);
    expect(listening.records[0]).toMatchObject({
      level: "warn",
      msg: expect.stringMatching(/IAC_CODE_AGUI_AUTH_TOKEN.*(space|whitespace)/),
    });
    expect(listening.stderr()).toBe("");
    expect(JSON.stringify(listening.records)).not.toContain("client-secret");
    const url = listening.url;
    expect((await postRun(url, runInput("chat"))).status).toBe(401);
    const { status, events } = await postRun(url, runInput("chat"), { authorization: "Bearer client-secret" });
    expect(status).toBe(200);
    await expectValidRun(events);
  });
});

describe("a port already in use", () => {
  let taken: net.Server;
  let port: number;
  beforeAll(async () => {
    taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    port = (taken.address() as net.AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => taken.close(() => resolve())));

  it("ends the command with one fatal record naming host:port and a non-zero exit code", async () => {
    const child = start({ IAC_CODE_AGUI_HOST: "127.0.0.1", IAC_CODE_AGUI_PORT: String(port), IAC_CODE_AGUI_A2A_URL: NO_KERNEL });
    let stderr = "";
    child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const lines: string[] = [];
    createInterface({ input: child.stdout! }).on("line", (line) => lines.push(line));
    const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
    expect(code).not.toBe(0);
    expect(code).not.toBeNull();
    await waitFor(() => lines.length > 0);
    expect(lines.map((line) => JSON.parse(line) as unknown)).toEqual([
      expect.objectContaining({ level: "fatal", msg: expect.stringContaining(`127.0.0.1:${port} is already in use`) }),
    ]);
    expect(stderr).toBe("");
  });
});
