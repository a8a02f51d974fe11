/**
 * An operator coming from the reference adapter (`iac-code agui`), through
 * the built command (`dist/lib/main.js`, `npm test` builds it): its config
 * file starts the service, its default state directory and port are this
 * service's, a thread an earlier version kept in its default directory
 * (`~/.config/agui`) is still there after the upgrade, `--idle-shutdown`
 * stops an idle service, and `/health` carries the reference's fields.
 * Each process has a home directory of its own.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "@jest/globals";
import { EventType } from "@ag-ui/core";
import { startReplayKernel, type ReplayKernel } from "../lib/kernel/replay-kernel.js";
import { threadFileStem } from "../lib/state/thread-file-stem.js";
import { spawnBin, type BinProcess } from "./support/bin-process.js";
import { connectHttpAgent, connectingAgent, httpAgent, runHttpAgent, transcript, userMessage } from "./support/http-agent.js";
import { MAIN } from "./support/service-process.js";

describe("the reference adapter's operator surface", () => {
  let kernel: ReplayKernel;
  let home: string;
  const running: BinProcess[] = [];
  const start = async (args: string[], env: Record<string, string> = {}) => {
    const bin = await spawnBin(process.execPath, { args: [MAIN, ...args], env: { HOME: home, IAC_CODE_AGUI_A2A_URL: kernel.url, ...env } });
    running.push(bin);
    return bin;
  };
  const forwardedProps = () => ({ iacCode: { schemaVersion: 1, rosInvocationId: "ros-1", cwd: home } });

  beforeAll(async () => {
    if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run \`npm run build\` (npm test does)`);
    kernel = await startReplayKernel({ timeScale: 0 });
  });
  afterEach(async () => {
    for (const bin of running.splice(0)) await bin.stop();
    rmSync(home, { recursive: true, force: true });
  });
  afterAll(() => kernel.close());
  beforeEach(() => {
    home = mkdtempSync(path.join(os.tmpdir(), "agui-home-"));
  });

  it("starts from the reference's config file, ~ expanded, its token required, and /health has the reference's fields", async () => {
    const file = path.join(home, "agui.yaml");
    writeFileSync(file, "host: 127.0.0.1\nport: 0\nstate_dir: ~/state-from-file\nauth_token: 'file-secret'\nlog_stdout: true\n");
    const bin = await start(["--config", "~/agui.yaml", "--allowed-cwds", home]);
    const health = (await (await fetch(`${bin.url}/health`)).json()) as Record<string, unknown>;
    expect(health).toMatchObject({ status: "ok", protocol: "ag-ui", executionKernel: "a2a-1.0", serverVersion: expect.any(String) });
    expect(health.protocolPackageVersion).toEqual(expect.any(String));

    const agent = httpAgent(bin.url, { messages: [userMessage("chat")] });
    agent.headers = { authorization: "Bearer file-secret" };
    const run = await runHttpAgent(agent, { forwardedProps: forwardedProps() });
    expect(run.error).toBeUndefined();
    expect(run.events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED });
    expect(existsSync(path.join(home, "state-from-file", "threads", `${threadFileStem(agent.threadId)}.json`))).toBe(true);
    expect((await fetch(bin.url, { method: "POST" })).status).toBe(401);
  });

  it("keeps a thread an earlier version left in ~/.config/agui: the default directory is now ~/.iac-code/agui", async () => {
    // The earlier version, as it ran by default: its state in ~/.config/agui.
    const before = await start(["--port", "0", "--allowed-cwds", home, "--state-dir", path.join(home, ".config", "agui")]);
    const live = httpAgent(before.url, { messages: [userMessage("chat")] });
    expect((await runHttpAgent(live, { forwardedProps: forwardedProps() })).error).toBeUndefined();
    await before.stop();

    // The upgrade, with nothing set: the reference's directory, and the thread in it.
    const after = await start(["--port", "0", "--allowed-cwds", home]);
    expect(after.lines().some((line) => /copied 1 thread\(s\) from .*\.config\/agui/.test(line))).toBe(true);
    expect(existsSync(path.join(home, ".iac-code", "agui", "threads", `${threadFileStem(live.threadId)}.json`))).toBe(true);
    const connectUrl = `${after.url}/extensions/iac-code/v1/threads/${encodeURIComponent(live.threadId)}/connect`;
    const reloaded = connectingAgent(after.url, connectUrl, { threadId: live.threadId });
    const attached = await connectHttpAgent(reloaded, { forwardedProps: forwardedProps() });
    expect(attached.error).toBeUndefined();
    expect(transcript(reloaded.messages)).toEqual(transcript(live.messages));
    expect(reloaded.messages.length).toBeGreaterThan(1);
  });

  it("listens on the reference's port 8000 when none is set, and puts state under $IAC_CODE_CONFIG_DIR/agui", async () => {
    const bin = await start(["--allowed-cwds", home], { IAC_CODE_CONFIG_DIR: path.join(home, "conf") }).catch((error: Error) => error);
    if (bin instanceof Error) {
      // Another process on this machine holds 8000: the start says so, naming the default port.
      expect(bin.message).toMatch(/127\.0\.0\.1:8000 is already in use/);
      return;
    }
    expect(bin.url).toBe("http://127.0.0.1:8000");
    const agent = httpAgent(bin.url, { messages: [userMessage("chat")] });
    expect((await runHttpAgent(agent, { forwardedProps: forwardedProps() })).error).toBeUndefined();
    expect(existsSync(path.join(home, "conf", "agui", "threads", `${threadFileStem(agent.threadId)}.json`))).toBe(true);
  });

  it("shuts down by itself after --idle-shutdown seconds without a run, probes aside", async () => {
    const bin = await start(["--port", "0", "--allowed-cwds", home, "--idle-shutdown", "1"]);
    const exited = new Promise<number | null>((resolve) => bin.child.once("exit", (code) => resolve(code)));
    expect((await fetch(`${bin.url}/health`)).status).toBe(200);
    expect(await exited).toBe(0);
    expect(bin.lines().some((line) => /idle for 1 s: shutting down/.test(line))).toBe(true);
  });
});
