/**
 * The kernel supervisor with real processes: the standalone demo kernel
 * (`dist/lib/kernel/main.js`, built by `npm test`), and small node scripts
 * for kernels that exit, never answer, or ignore SIGTERM. Waits are on the
 * supervisor's events, not on time.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "@jest/globals";
import { PROJECT_ROOT } from "../../../lib/paths.js";
import { kernelAnswers } from "../../../lib/kernel-process/agent-card.js";
import {
  DEFAULT_RESTART_POLICY,
  KernelStartError,
  restartDelay,
  startKernelProcess,
  type KernelEvent,
  type KernelLog,
  type KernelProcess,
  type KernelProcessOptions,
} from "../../../lib/kernel-process/supervisor.js";
import { alive } from "../../support/service-process.js";
import { waitFor } from "../../support/service.js";

const DEMO_KERNEL = path.join(PROJECT_ROOT, "dist", "lib", "kernel", "main.js");
const demoKernel = [process.execPath, DEMO_KERNEL, "--port", "{port}", "--time-scale", "0"];
/** Answers its agent card and ignores SIGTERM. */
const STUBBORN = `process.on("SIGTERM", () => {});
require("node:http").createServer((_req, res) => res.setHeader("content-type", "application/json").end("{}")).listen(Number(process.argv[1]), "127.0.0.1");`;

describe("the kernel supervisor", () => {
  const running: KernelProcess[] = [];
  beforeAll(() => {
    if (!existsSync(DEMO_KERNEL)) throw new Error(`${DEMO_KERNEL} is missing: run \`npm run build\` (npm test does)`);
  });
  afterEach(async () => {
    await Promise.all(running.splice(0).map((kernel) => kernel.stop()));
  });

  /** A supervisor whose log and events the test reads. */
  const start = async (options: Partial<KernelProcessOptions> & Pick<KernelProcessOptions, "argv">) => {
    const events: KernelEvent[] = [];
    const lines: string[] = [];
    const log: KernelLog = {
      info: (_fields, line) => lines.push(line),
      warn: (_f, line) => lines.push(line),
      error: (_f, line) => lines.push(line),
    };
    const kernel = await startKernelProcess({ log, onEvent: (event) => events.push(event), stopGraceMs: 2000, ...options });
    running.push(kernel);
    return { kernel, events, lines };
  };
  const readyPids = (events: KernelEvent[]) => events.flatMap((event) => (event.type === "ready" ? [event.pid] : []));
  const restartDelays = (events: KernelEvent[]) => events.flatMap((event) => (event.type === "restart-scheduled" ? [event.delayMs] : []));

  it("runs the command on a loopback port it chose, counts it started once it answers, logs its output, and stops it", async () => {
    const { kernel, events, lines } = await start({ argv: demoKernel, secrets: ["Fixtures"] });
    expect(kernel.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const pid = kernel.pid!;
    expect(events).toEqual([
      { type: "started", pid },
      { type: "ready", pid },
    ]);
    expect(await kernelAnswers(kernel.url, { timeoutMs: 1000 })).toBe(true);
    expect(lines).toContain(`kernel[${pid}] stdout: A2A 1.0 replay kernel listening on ${kernel.url}`);
    // A line that holds a secret the service knows is logged without it.
    await waitFor(() => lines.some((line) => line.startsWith(`kernel[${pid}] stdout: [redacted] (type one`)));

    await kernel.stop();
    expect(events.at(-1)).toEqual({ type: "exited", pid, code: 0, signal: null, expected: true });
    expect(alive(pid)).toBe(false);
    expect(kernel.pid).toBeUndefined();
    expect(lines.at(-1)).toBe(`kernel[${pid}] stopped`);
    expect(await kernelAnswers(kernel.url, { timeoutMs: 1000 })).toBe(false);
  });

  it("restarts a kernel that dies, on the same URL, waiting twice as long each time it dies soon after a start, up to the cap", async () => {
    const { kernel, events, lines } = await start({
      argv: demoKernel,
      restart: { initialDelayMs: 40, maxDelayMs: 120, resetAfterMs: 60_000 },
    });
    const url = kernel.url;
    for (let death = 1; death <= 4; death++) {
      const pid = kernel.pid!;
      process.kill(pid, "SIGKILL");
      await waitFor(() => readyPids(events).length === death + 1, 15_000);
      expect(readyPids(events).at(-1)).not.toBe(pid);
      expect(lines).toContain(
        `kernel[${pid}] exited (signal SIGKILL); its runs in flight end with A2A_UNAVAILABLE; restarting it in ${restartDelays(events).at(-1)! / 1000} s`,
      );
    }
    expect(restartDelays(events)).toEqual([40, 80, 120, 120]);
    expect(kernel.url).toBe(url);
    expect(await kernelAnswers(url, { timeoutMs: 1000 })).toBe(true);
  }, 60_000);

  it("waits the first delay again once a kernel that was up for the healthy period dies", async () => {
    const { kernel, events } = await start({ argv: demoKernel, restart: { initialDelayMs: 40, maxDelayMs: 1000, resetAfterMs: 0 } });
    for (let death = 1; death <= 2; death++) {
      process.kill(kernel.pid!, "SIGKILL");
      await waitFor(() => readyPids(events).length === death + 1, 15_000);
    }
    expect(restartDelays(events)).toEqual([40, 40]);
  }, 30_000);

  it("doubles the delay from half a second to at most thirty by default", () => {
    expect([0, 1, 2, 3, 4, 5, 6, 7, 1000].map((failures) => restartDelay(failures))).toEqual([
      500, 1000, 2000, 4000, 8000, 16000, 30_000, 30_000, 30_000,
    ]);
    expect(DEFAULT_RESTART_POLICY.resetAfterMs).toBe(60_000);
  });

  // The wait for an answer is short only where running out of it is the case: a loaded machine may take
  // longer than half a second just to start Node, and a kernel that exits must be seen exiting.
  it.each([
    ["exits at once", [process.execPath, "-e", "process.exit(3)", "{port}"], 15_000, /exited \(code 3\) before it answered/],
    [
      "cannot be spawned",
      [path.join(PROJECT_ROOT, "no-such-kernel"), "{port}"],
      15_000,
      /could not be started: spawn .*no-such-kernel ENOENT/,
    ],
    [
      "never answers",
      [process.execPath, "-e", "setInterval(() => {}, 1000)", "{port}"],
      500,
      /did not answer at http:\/\/127\.0\.0\.1:\d+\/ within 0\.5 s/,
    ],
  ])("does not start a kernel that %s, and leaves no process behind", async (_case, argv, startTimeoutMs, reason) => {
    const events: KernelEvent[] = [];
    const started = startKernelProcess({ argv, startTimeoutMs, onEvent: (event) => events.push(event) });
    await expect(started).rejects.toThrow(KernelStartError);
    await expect(started).rejects.toThrow(reason);
    for (const event of events) if (event.type === "started") expect(alive(event.pid)).toBe(false);
  });

  it("kills a kernel that ignores SIGTERM once the grace has passed", async () => {
    const { kernel, events, lines } = await start({ argv: [process.execPath, "-e", STUBBORN, "{port}"], stopGraceMs: 300 });
    const pid = kernel.pid!;
    await kernel.stop();
    expect(events.at(-1)).toEqual({ type: "exited", pid, code: null, signal: "SIGKILL", expected: true });
    expect(lines.at(-1)).toBe(`kernel[${pid}] did not stop within 0.3 s of SIGTERM; killed`);
    expect(alive(pid)).toBe(false);
  });

  describe("a command that is a wrapper (sh -c), its kernel a grandchild", () => {
    const wrapped = ["sh", "-c", `"${process.execPath}" "${DEMO_KERNEL}" --port "$0" --time-scale 0; exit 0`, "{port}"];
    /** What `ps` lists of the group, zombies left out: a dead process init has not reaped yet holds nothing. */
    const groupAlive = (pgid: number) =>
      execFileSync("ps", ["-e", "-o", "pgid=,stat="], { encoding: "utf8" })
        .split("\n")
        .map((line) => line.trim().split(/\s+/))
        .some(([group, stat]) => Number(group) === pgid && !stat?.startsWith("Z"));

    it("stops the whole process group: the grandchild too", async () => {
      const { kernel } = await start({ argv: wrapped });
      const leader = kernel.pid!;
      expect(await kernelAnswers(kernel.url, { timeoutMs: 1000 })).toBe(true);
      await kernel.stop();
      expect(groupAlive(leader)).toBe(false);
      expect(await kernelAnswers(kernel.url, { timeoutMs: 1000 })).toBe(false);
    });

    it("kills what a dead wrapper left behind, so the next kernel gets the port", async () => {
      const { kernel, events } = await start({ argv: wrapped, restart: { initialDelayMs: 40 } });
      const leader = kernel.pid!;
      // The wrapper alone dies; its grandchild would go on holding the port.
      process.kill(leader, "SIGKILL");
      await waitFor(() => readyPids(events).length === 2, 15_000);
      expect(groupAlive(leader)).toBe(false);
      expect(await kernelAnswers(kernel.url, { timeoutMs: 1000 })).toBe(true);
    }, 30_000);
  });
});
