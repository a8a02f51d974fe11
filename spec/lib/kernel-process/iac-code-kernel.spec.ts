/**
 * `IAC_CODE_AGUI_KERNEL=iac-code` through the built service
 * (`dist/lib/main.js`, `npm test` builds it): it runs `iac-code a2a` from
 * PATH as the reference adapter does. The `iac-code` here is a stand-in of
 * the test's own, first on PATH: it writes down the arguments and
 * environment it was given, then serves A2A (the replay kernel) on the port
 * it was told, requiring the token it was given, so a run that succeeds is
 * one the service sent that token with. Killed, it is started again.
 */
import { chmodSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { EventType } from "@ag-ui/core";
import { PROJECT_ROOT } from "../../../lib/paths.js";
import { expectValidRun } from "../../support/agui.js";
import { startServiceProcess, type ServiceProcess } from "../../support/service-process.js";
import { postRun, runInput, waitFor } from "../../support/service.js";

const REPLAY_KERNEL = path.join(PROJECT_ROOT, "dist", "lib", "kernel", "replay-kernel.js");

interface Launch {
  pid: number;
  argv: string[];
  token: string | undefined;
  allowedCwds: string | undefined;
  /** Whether the token clients send the service reached the kernel's environment (it must not). */
  sawClientToken: boolean;
}

/**
 * The stand-in's module: records its launch in `$FAKE_IAC_CODE_DIR/<pid>.json`, then serves A2A where it was told to.
 * The record is written beside and renamed into place, so the spec's polling never reads a file still being written.
 */
const standIn = (replayKernel: string) => `import { renameSync, writeFileSync } from "node:fs";
import path from "node:path";
const argv = process.argv.slice(2);
const record = path.join(process.env.FAKE_IAC_CODE_DIR, process.pid + ".json");
writeFileSync(record + ".part", JSON.stringify({
  pid: process.pid,
  argv,
  token: process.env.IACCODE_A2A_HTTP_TOKEN,
  allowedCwds: process.env.IACCODE_A2A_ALLOWED_CWDS,
  sawClientToken: process.env.IAC_CODE_AGUI_AUTH_TOKEN !== undefined,
}));
renameSync(record + ".part", record);
const at = (flag) => argv[argv.indexOf(flag) + 1];
if (argv[0] !== "a2a" || !process.env.IACCODE_A2A_HTTP_TOKEN) {
  console.error("usage: iac-code a2a --host H --port P, with IACCODE_A2A_HTTP_TOKEN set");
  process.exit(2);
}
const { startReplayKernel } = await import(${JSON.stringify(replayKernel)});
await startReplayKernel({ host: at("--host"), port: Number(at("--port")), requireToken: process.env.IACCODE_A2A_HTTP_TOKEN, timeScale: 0 });
`;

describe("IAC_CODE_AGUI_KERNEL=iac-code", () => {
  let binDir: string;
  let launchesDir: string;
  let service: ServiceProcess;
  const workspace = mkdtempSync(path.join(os.tmpdir(), "agui-iac-code-ws-"));
  const launches = (): Launch[] =>
    readdirSync(launchesDir)
      .filter((file) => file.endsWith(".json"))
      .map((file) => JSON.parse(readFileSync(path.join(launchesDir, file), "utf8")) as Launch);

  beforeAll(async () => {
    if (!existsSync(REPLAY_KERNEL)) throw new Error(`${REPLAY_KERNEL} is missing: run \`npm run build\` (npm test does)`);
    binDir = mkdtempSync(path.join(os.tmpdir(), "agui-iac-code-bin-"));
    launchesDir = mkdtempSync(path.join(os.tmpdir(), "agui-iac-code-launches-"));
    // An executable named iac-code, as the package installs one: a shell script that execs Node on the module (same pid).
    const module = path.join(binDir, "iac-code-stand-in.mjs");
    writeFileSync(module, standIn(REPLAY_KERNEL));
    const executable = path.join(binDir, "iac-code");
    writeFileSync(executable, `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(module)} "$@"\n`);
    chmodSync(executable, 0o755);
    service = await startServiceProcess({
      PATH: `${binDir}${path.delimiter}${process.env.PATH ?? ""}`,
      FAKE_IAC_CODE_DIR: launchesDir,
      IAC_CODE_AGUI_KERNEL: "iac-code",
      IAC_CODE_AGUI_AUTH_TOKEN: "client-secret",
      IAC_CODE_AGUI_ALLOWED_CWDS: [workspace, os.tmpdir()].join(path.delimiter),
      IAC_CODE_AGUI_STATE_DIR: mkdtempSync(path.join(os.tmpdir(), "agui-iac-code-state-")),
    });
  });
  afterAll(async () => {
    service?.child.kill("SIGTERM");
    await service?.exited;
    for (const dir of [binDir, launchesDir, workspace]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const auth = { authorization: "Bearer client-secret" };

  it("starts `iac-code a2a` on a loopback port with thinking exposed, a random token and the allowed workspaces", () => {
    const [launch] = launches();
    expect(launches()).toHaveLength(1);
    expect(launch!.argv).toEqual(["a2a", "--host", "127.0.0.1", "--port", expect.stringMatching(/^\d+$/), "--thinking-exposure", "all"]);
    expect(launch!.token).toMatch(/^[\w-]{43}$/);
    expect(launch!.allowedCwds).toBe([workspace, os.tmpdir()].map((dir) => path.resolve(dir)).join(path.delimiter));
    expect(launch!.sawClientToken).toBe(false);
    const started = service.records().find((record) => /listening on/.test(record.msg))!;
    expect(started).toMatchObject({ kernelUrl: `http://127.0.0.1:${launch!.argv[4]}/`, embeddedKernel: false });
    expect(started.msg).toMatch(/\(iac-code a2a at /);
    // The token is the kernel's and the service's alone: never in the log.
    expect(JSON.stringify(service.records())).not.toContain(launch!.token);
  });

  it("sends the kernel its token on every call: /ready and a run go through", async () => {
    expect((await fetch(`${service.url}/ready`)).status).toBe(200);
    const { status, events } = await postRun(service.url, runInput("chat", {}, { cwd: workspace }), auth);
    expect(status).toBe(200);
    await expectValidRun(events);
    expect(events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED });
  });

  it("starts it again when it dies, on the same port with the same token, and the next run reaches it", async () => {
    const [first] = launches();
    process.kill(first!.pid, "SIGKILL");
    await waitFor(() => launches().length === 2);
    const second = launches().find((launch) => launch.pid !== first!.pid)!;
    expect(second.argv).toEqual(first!.argv);
    expect(second.token).toBe(first!.token);
    await waitFor(() =>
      service.records().some((record) => record.msg === `kernel[${second.pid}] answers at http://127.0.0.1:${first!.argv[4]}/`),
    );
    const { events } = await postRun(service.url, runInput("chat", {}, { cwd: workspace }), auth);
    await expectValidRun(events);
    expect(events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED });
  });
});
