/**
 * The standalone demo kernel (`npm run kernel`, `dist/lib/kernel/main.js`)
 * serves either dialect: `--dialect 0.3` is the stock A2A 0.3 agent, the
 * default stays the 1.0 iac-code replay kernel. `npm test` builds first.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "@jest/globals";
import { A2AClient } from "a2a-sdk-v03/client";
import { PROJECT_ROOT } from "../../../lib/paths.js";
import { collect, userMessage } from "./a2a-v03.js";

const DEMO_KERNEL = path.join(PROJECT_ROOT, "dist", "lib", "kernel", "main.js");

interface Run {
  child: ChildProcess;
  output: () => string;
  /** The URL it prints once it listens and has listed its fixtures; rejects if it exits first. */
  url: Promise<string>;
  exited: Promise<number | null>;
}

describe("the demo kernel's --dialect", () => {
  const runs: Run[] = [];
  beforeAll(() => {
    if (!existsSync(DEMO_KERNEL)) throw new Error(`${DEMO_KERNEL} is missing: run \`npm run build\` (npm test does)`);
  });
  afterEach(async () => {
    await Promise.all(
      runs.splice(0).map(async ({ child, exited }) => {
        if (child.exitCode === null) child.kill("SIGTERM");
        await exited;
      }),
    );
  });

  const run = (...args: string[]): Run => {
    const child = spawn(process.execPath, [DEMO_KERNEL, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    const url = new Promise<string>((resolve, reject) => {
      const read = (chunk: Buffer) => {
        output += chunk.toString("utf8");
        // Its second line, the fixtures it offers, comes once it listens.
        const printed = /listening on (\S+)\n[^\n]*Fixtures[^\n]*\n/.exec(output)?.[1];
        if (printed) resolve(printed);
      };
      child.stdout!.on("data", read);
      child.stderr!.on("data", read);
      void exited.then((code) => reject(new Error(`the kernel exited (${code}) before listening: ${output}`)));
    });
    // Runs that are to exit (--help, a wrong flag) never listen; awaiting `url` still rejects.
    url.catch(() => undefined);
    const started = { child, output: () => output, url, exited };
    runs.push(started);
    return started;
  };

  it("--dialect 0.3 serves the stock A2A 0.3 agent and its fixtures", async () => {
    const kernel = run("--dialect", "0.3", "--port", "0", "--time-scale", "0");
    const url = await kernel.url;
    expect(kernel.output()).toContain("A2A 0.3 replay kernel");
    expect(kernel.output()).toContain('anything else plays "plain-chat"');
    const card = (await (await fetch(new URL(".well-known/agent.json", url))).json()) as { protocolVersion: string; url: string };
    expect(card).toMatchObject({ protocolVersion: "0.3.0", url });
    const client = await A2AClient.fromCardUrl(new URL(".well-known/agent-card.json", url).href);
    const { events } = await collect(client.sendMessageStream(userMessage("fails")));
    expect(events.at(-1)).toMatchObject({ kind: "status-update", status: { state: "failed" }, final: true });
  });

  it("speaks 1.0 by default", async () => {
    const kernel = run("--port", "0");
    const url = await kernel.url;
    expect(kernel.output()).toContain("A2A 1.0 replay kernel");
    const card = (await (await fetch(new URL(".well-known/agent-card.json", url))).json()) as Record<string, unknown>;
    expect(card).toMatchObject({ supportedInterfaces: [expect.objectContaining({ protocolVersion: "1.0" })] });
    expect(card.protocolVersion).toBeUndefined();
  });

  it("lists --dialect in its usage, and refuses a dialect it does not speak", async () => {
    const help = run("--help");
    expect(await help.exited).toBe(0);
    expect(help.output()).toMatch(/--dialect\s+the A2A version to speak \(default 1\.0\)/);
    const wrong = run("--dialect", "0.2");
    expect(await wrong.exited).toBe(1);
    expect(wrong.output()).toContain('--dialect must be 1.0 or 0.3, got "0.2"');
  });
});
