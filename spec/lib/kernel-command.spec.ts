/**
 * `IAC_CODE_AGUI_KERNEL_COMMAND` as operators use it: the built command
 * (`dist/lib/main.js`) runs the standalone demo kernel as its child, on a
 * port it picks; a kernel killed mid-run ends that run with RUN_ERROR
 * A2A_UNAVAILABLE and is restarted, the next run reaches the new one, and
 * the service's shutdown leaves no kernel behind. `npm test` builds first.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "@jest/globals";
import { EventType } from "@ag-ui/core";
import { PROJECT_ROOT } from "../../lib/paths.js";
import { expectValidRun } from "../support/agui.js";
import { alive, openRun, parseSse } from "../support/service-process.js";
import { postRun, runInput, waitFor } from "../support/service.js";

const MAIN = path.join(PROJECT_ROOT, "dist", "lib", "main.js");
const DEMO_KERNEL = path.join(PROJECT_ROOT, "dist", "lib", "kernel", "main.js");
const quoted = (word: string) => `'${word}'`;
/** The standalone demo kernel in real time: `slow-chat` streams for about three seconds. */
const DEMO_KERNEL_COMMAND = `${quoted(process.execPath)} ${quoted(DEMO_KERNEL)} --port {port} --time-scale 1`;

interface Service {
  child: ChildProcess;
  url: string | undefined;
  /** Everything the process wrote, stdout and stderr: its log, wherever it writes it. */
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

describe("a kernel the service runs itself", () => {
  const services: Service[] = [];
  beforeAll(() => {
    for (const file of [MAIN, DEMO_KERNEL])
      if (!existsSync(file)) throw new Error(`${file} is missing: run \`npm run build\` (npm test does)`);
  });
  afterEach(() => {
    for (const { child } of services.splice(0)) child.kill("SIGKILL");
  });

  /** Starts the command; resolves once it says where it listens, or once it exited. */
  const start = async (env: Record<string, string>): Promise<Service> => {
    const child = spawn(process.execPath, [MAIN], {
      env: {
        PATH: process.env.PATH ?? "",
        IAC_CODE_AGUI_HOST: "127.0.0.1",
        IAC_CODE_AGUI_PORT: "0",
        IAC_CODE_AGUI_STATE_DIR: mkdtempSync(path.join(os.tmpdir(), "agui-kernel-command-")),
        IAC_CODE_AGUI_ALLOWED_CWDS: os.tmpdir(),
        ...env,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    for (const stream of [child.stdout!, child.stderr!]) stream.on("data", (chunk: Buffer) => (output += chunk.toString()));
    let hasExited = false;
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.once("exit", (code, signal) => {
        hasExited = true;
        resolve({ code, signal });
      }),
    );
    const service: Service = { child, url: undefined, output: () => output, exited };
    services.push(service);
    const listening = () => /iac-code-agui listening on (http:\/\/[^\s"]+)/.exec(output)?.[1];
    await waitFor(() => hasExited || listening() !== undefined, 30_000);
    service.url = listening();
    return service;
  };
  /** The kernel processes the service said answered, in order. */
  const kernelPids = (service: Service) => [...service.output().matchAll(/kernel\[(\d+)\] answers at/g)].map((match) => Number(match[1]));

  it("runs the kernel, restarts it after it was killed mid-run, and stops it with the service", async () => {
    const service = await start({ IAC_CODE_AGUI_KERNEL_COMMAND: DEMO_KERNEL_COMMAND });
    expect(service.url).toBeDefined();
    const url = service.url!;
    expect(service.output()).toMatch(
      /listening on http:\/\/127\.0\.0\.1:\d+ \(kernel of IAC_CODE_AGUI_KERNEL_COMMAND at http:\/\/127\.0\.0\.1:\d+\/, an A2A 1\.0 agent\)/,
    );
    const [first] = kernelPids(service);
    expect(first).toBeDefined();
    // The kernel's own output, line by line, in the service's log.
    expect(service.output()).toMatch(
      new RegExp(`kernel\\[${first}\\] stdout: A2A 1\\.0 replay kernel listening on http://127\\.0\\.0\\.1:\\d+/`),
    );

    const before = await postRun(url, runInput("chat"));
    await expectValidRun(before.events);
    expect(before.events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED });

    const run = await openRun(url, runInput("slow-chat"), (raw) => raw.includes("TEXT_MESSAGE_CONTENT"));
    process.kill(first!, "SIGKILL");
    const cut = await parseSse(await run.rest);
    await expectValidRun(cut);
    expect(cut.at(-1)).toMatchObject({ type: EventType.RUN_ERROR, code: "A2A_UNAVAILABLE" });

    await waitFor(() => kernelPids(service).length === 2, 15_000);
    const second = kernelPids(service)[1]!;
    expect(second).not.toBe(first);
    expect(service.output()).toMatch(new RegExp(`kernel\\[${first}\\] exited \\(signal SIGKILL\\).*restarting it in 0\\.5 s`));
    const after = await postRun(url, runInput("chat"));
    await expectValidRun(after.events);
    expect(after.events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED });
    expect(await (await fetch(`${url}/ready`)).json()).toEqual({ ready: true, kernel: "ok", stateDir: "ok" });

    service.child.kill("SIGTERM");
    expect(await service.exited).toEqual({ code: 0, signal: null });
    expect(alive(second)).toBe(false);
    expect(service.output()).toContain(`kernel[${second}] stopped`);
  }, 60_000);

  it("does not start when its kernel never answers: exit code 1, the reason in the log, no process left", async () => {
    const service = await start({
      IAC_CODE_AGUI_KERNEL_COMMAND: `${quoted(process.execPath)} -e "setInterval(() => {}, 1000)" {port}`,
      IAC_CODE_AGUI_KERNEL_START_TIMEOUT_S: "1",
    });
    expect(await service.exited).toEqual({ code: 1, signal: null });
    expect(service.url).toBeUndefined();
    expect(service.output()).toMatch(/did not answer at http:\/\/127\.0\.0\.1:\d+\/ within 1 s/);
    const pid = Number(/kernel\[(\d+)\] started/.exec(service.output())?.[1]);
    expect(pid).toBeGreaterThan(0);
    expect(alive(pid)).toBe(false);
  });

  it("refuses a command it would need a shell for, as a setting (exit code 2)", async () => {
    const service = await start({ IAC_CODE_AGUI_KERNEL_COMMAND: "iac-code a2a --port {port} > kernel.log" });
    expect(await service.exited).toEqual({ code: 2, signal: null });
    expect(service.output()).toMatch(/IAC_CODE_AGUI_KERNEL_COMMAND \(--kernel-command\) has an unquoted ">"/);
  });
});
