/**
 * `node dist/examples/client.js`, as the README runs it: the built client
 * in a child process against the built service and its embedded demo
 * kernel. Each run fills in the request file's placeholders with a fresh
 * thread and run, so running one file twice gives two tries, neither
 * stuck on the other's thread (a used run id, a pause that waits for its
 * answer); a pause prints the thread and interrupt its answer takes.
 * `npm test` builds first.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { PROJECT_ROOT } from "../lib/paths.js";
import { startServiceProcess, type ServiceProcess } from "./support/service-process.js";

const CLIENT = path.join(PROJECT_ROOT, "dist", "examples", "client.js");

interface ClientRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runClient(args: string[]): Promise<ClientRun> {
  const child = spawn(process.execPath, [CLIENT, ...args], { cwd: PROJECT_ROOT, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.once("close", (code) => resolve({ code, stdout, stderr })));
}

/** The event lines the client printed, as `TYPE {json}`. */
const eventTypes = (stdout: string) => stdout.split("\n").flatMap((line) => /^([A-Z_]+) /.exec(line)?.slice(1, 2) ?? []);

describe("the example client", () => {
  let service: ServiceProcess;
  const request = (name: string) => path.join("examples", "requests", name);
  beforeAll(async () => {
    if (!existsSync(CLIENT)) throw new Error(`${CLIENT} is missing: run \`npm run build\` (npm test does)`);
    service = await startServiceProcess({ IAC_CODE_AGUI_STATE_DIR: mkdtempSync(path.join(os.tmpdir(), "agui-client-")) });
  });
  afterAll(async () => {
    service.child.kill("SIGTERM");
    await service.exited;
  });

  it.each(["permission.json", "chat.json"])("runs %s twice: each run a try of its own, both finished", async (file) => {
    for (let attempt = 0; attempt < 2; attempt++) {
      const run = await runClient([request(file), "--url", `${service.url}/`]);
      expect(run).toMatchObject({ code: 0, stderr: "" });
      const types = eventTypes(run.stdout);
      expect(types[0]).toBe("RUN_STARTED");
      expect(types.at(-1)).toBe("RUN_FINISHED");
    }
  });

  it("answers a pause with the --thread and --interrupt it printed", async () => {
    const paused = await runClient([request("permission.json"), "--url", `${service.url}/`]);
    const [, thread, interrupt] = /--thread (\S+) --interrupt (\S+)/.exec(paused.stdout) ?? [];
    expect(thread).toBeDefined();
    const answered = await runClient([
      request("permission-allow.json"),
      "--url",
      `${service.url}/`,
      "--thread",
      thread!,
      "--interrupt",
      interrupt!,
    ]);
    expect(answered).toMatchObject({ code: 0, stderr: "" });
    expect(answered.stdout).toMatch(/^RUN_FINISHED .*"outcome":\{"type":"success"/m);
    expect(answered.stdout).not.toContain("paused at");
  });

  it("says what an answer needs when it is run without it", async () => {
    const run = await runClient([request("permission-allow.json"), "--url", `${service.url}/`]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/answers an interrupt: give the paused try's --thread and the --interrupt it answers/);
  });
});
