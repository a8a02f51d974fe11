/**
 * A kernel the service runs itself (`IAC_CODE_AGUI_KERNEL_COMMAND`): the
 * command is spawned without a shell on a loopback port the service chose,
 * counted as started once it answers its agent card, restarted with
 * exponential backoff whenever it dies, and stopped (SIGTERM, then SIGKILL
 * after a grace) when the service stops. Its output goes to the service's
 * log line by line, within a budget of lines a second (`output-budget.ts`).
 *
 * On POSIX the kernel leads a process group of its own, and every signal
 * goes to the whole group: a command that is a wrapper (`npm run …`,
 * `sh -c …`, a Python launcher) leaves no grandchild behind, and a Ctrl-C
 * in the service's terminal reaches the service alone, so the kernel stays
 * up while the runs in flight drain, and is stopped after them. A service
 * killed outright (SIGKILL) cannot stop it; any other exit sends it SIGTERM.
 *
 * Runs in flight when the kernel dies end as on any broken kernel
 * connection, with RUN_ERROR `A2A_UNAVAILABLE`; the URL stays the same
 * across restarts, so the next run reaches the new kernel.
 */
import { spawn, type ChildProcess } from "node:child_process";
import net, { type AddressInfo } from "node:net";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { kernelAnswers } from "./agent-card.js";
import { withPort } from "./command-line.js";
import { KERNEL_OUTPUT_LINES_PER_S, OutputBudget } from "./output-budget.js";
import { forEachLine } from "./output-lines.js";
import { groupAlive, signalGroup } from "./process-group.js";

export interface RestartPolicy {
  /** The wait before the first restart. */
  initialDelayMs: number;
  /** Each failure in a row doubles the wait, up to this. */
  maxDelayMs: number;
  /** A kernel that answered for this long before it died counts as healthy: the next wait is the first one again. */
  resetAfterMs: number;
}

export const DEFAULT_RESTART_POLICY: RestartPolicy = { initialDelayMs: 500, maxDelayMs: 30_000, resetAfterMs: 60_000 };
/** How long a kernel has, after SIGTERM, to stop by itself before it is killed. */
export const DEFAULT_STOP_GRACE_MS = 5000;
const DEFAULT_START_TIMEOUT_MS = 30_000;
const POLL_INTERVAL_MS = 100;
/** One agent-card request while waiting for a start; the whole wait is `startTimeoutMs`. */
const ANSWER_TIMEOUT_MS = 1000;
const OUTPUT_AFTER_EXIT_MS = 1000;

/** The wait before the next restart, after `failures` failed starts or early deaths in a row. */
export function restartDelay(failures: number, policy: RestartPolicy = DEFAULT_RESTART_POLICY): number {
  return Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** Math.min(failures, 30));
}

/** What happened to the kernel, for tests and tracing; the log says the same in words. */
export type KernelEvent =
  | { type: "started"; pid: number }
  | { type: "ready"; pid: number }
  | { type: "exited"; pid: number; code: number | null; signal: NodeJS.Signals | null; expected: boolean }
  | { type: "start-failed"; reason: string }
  | { type: "restart-scheduled"; delayMs: number };

/**
 * What the supervisor logs through: the service's logger (pino's
 * `info(fields, message)` and kin satisfy it), so kernel records carry
 * `kernelPid` and, for its output, `stream`.
 */
export interface KernelLog {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

const NO_LOG: KernelLog = { info: () => {}, warn: () => {}, error: () => {} };

export interface KernelProcessOptions {
  /** The command's words, `{port}` among them (see `command-line.ts`). */
  argv: readonly string[];
  /** Default 127.0.0.1. */
  host?: string;
  /** Default: a free port, chosen once and kept across restarts. */
  port?: number;
  /** The kernel's environment; default the service's own. */
  env?: NodeJS.ProcessEnv;
  /** The kernel's token, for the agent-card check. */
  token?: string | undefined;
  log?: KernelLog;
  /** Strings never written to the log as they are (the service's tokens), should the kernel print one. */
  secrets?: readonly (string | undefined)[];
  /** How long a start may take to answer its agent card. Default 30 s. */
  startTimeoutMs?: number;
  stopGraceMs?: number;
  restart?: Partial<RestartPolicy>;
  onEvent?: (event: KernelEvent) => void;
  /** How a failed start names the kernel; default "the kernel command (IAC_CODE_AGUI_KERNEL_COMMAND)". */
  name?: string;
}

export interface KernelProcess {
  /** The kernel's JSON-RPC URL, the same across restarts. */
  readonly url: string;
  /** The process running now; undefined while a restart waits. */
  readonly pid: number | undefined;
  /** SIGTERM to the kernel's process group, SIGKILL after the grace; no restart after it. */
  stop(): Promise<void>;
}

/** The kernel never answered at start: the service does not start either. */
export class KernelStartError extends Error {
  override name = "KernelStartError";
}

const IS_WINDOWS = process.platform === "win32";

type Exit = { code: number | null; signal: NodeJS.Signals | null; error?: Error };

interface Running {
  child: ChildProcess;
  pid: number;
  exited: Promise<Exit>;
}

/** Starts the kernel and resolves once it answers; rejects with KernelStartError (the child stopped) otherwise. */
export async function startKernelProcess(options: KernelProcessOptions): Promise<KernelProcess> {
  const host = options.host ?? "127.0.0.1";
  const port = options.port || (await freePort(host));
  const supervisor = new KernelSupervisor(options, host, port);
  await supervisor.start();
  return supervisor;
}

class KernelSupervisor implements KernelProcess {
  readonly url: string;
  readonly #options: KernelProcessOptions;
  readonly #argv: string[];
  readonly #policy: RestartPolicy;
  readonly #log: KernelLog;
  #running: Running | undefined;
  #readySince = 0;
  #failures = 0;
  #restartTimer: NodeJS.Timeout | undefined;
  #stopping = false;
  #stopped: Promise<void> | undefined;
  /** A service that exits without stopping the kernel (an uncaught error, process.exit) still signals it. */
  readonly #onProcessExit = () => this.#running && signalGroup(this.#running.pid, "SIGTERM");

  constructor(options: KernelProcessOptions, host: string, port: number) {
    this.#options = options;
    this.#argv = withPort(options.argv, port);
    this.#policy = { ...DEFAULT_RESTART_POLICY, ...options.restart };
    this.#log = options.log ?? NO_LOG;
    this.url = `http://${host.includes(":") ? `[${host}]` : host}:${port}/`;
  }

  get pid(): number | undefined {
    return this.#running?.pid;
  }

  async start(): Promise<void> {
    process.on("exit", this.#onProcessExit);
    try {
      await this.#launch();
    } catch (error) {
      process.off("exit", this.#onProcessExit);
      throw error;
    }
  }

  stop(): Promise<void> {
    this.#stopping = true;
    clearTimeout(this.#restartTimer);
    this.#stopped ??= this.#terminate(this.#running).finally(() => {
      this.#running = undefined;
      process.off("exit", this.#onProcessExit);
    });
    return this.#stopped;
  }

  /** One kernel process, up to its first answer. Throws KernelStartError once it is stopped again. */
  async #launch(): Promise<void> {
    const running = this.#spawn();
    this.#running = running;
    const problem = await this.#waitForAnswer(running);
    if (problem === undefined) {
      this.#readySince = Date.now();
      this.#log.info({ kernelPid: running.pid, kernelUrl: this.url }, `kernel[${running.pid}] answers at ${this.url}`);
      this.#emit({ type: "ready", pid: running.pid });
      void running.exited.then((exit) => this.#died(running, exit));
      return;
    }
    this.#log.error({ kernelPid: running.pid }, `kernel${running.pid > 0 ? `[${running.pid}]` : ""} ${problem}`);
    this.#emit({ type: "start-failed", reason: problem });
    await this.#terminate(running, 0);
    if (this.#running === running) this.#running = undefined;
    throw new KernelStartError(`${this.#options.name ?? "the kernel command (IAC_CODE_AGUI_KERNEL_COMMAND)"} ${problem}`);
  }

  #spawn(): Running {
    const [file, ...args] = this.#argv as [string, ...string[]];
    const child = spawn(file, args, {
      env: this.#options.env ?? process.env,
      stdio: ["ignore", "pipe", "pipe"],
      detached: !IS_WINDOWS,
      windowsHide: true,
    });
    const exited = new Promise<Exit>((resolve) => {
      child.once("exit", (code, signal) => {
        resolve({ code, signal });
        // A process that left the kernel's group (setsid) could hold the pipes open forever, and the service with them;
        // what the kernel wrote before it exited is read within the second.
        setTimeout(() => {
          child.stdout?.destroy();
          child.stderr?.destroy();
        }, OUTPUT_AFTER_EXIT_MS).unref();
      });
      // A command that cannot be spawned (ENOENT, EACCES) reports it here, and may never emit "exit".
      child.once("error", (error) => resolve({ code: null, signal: null, error }));
    });
    // The pid is -1 only for a spawn that failed; its "error" has the reason.
    const pid = child.pid ?? -1;
    const budget = new OutputBudget((dropped) =>
      this.#log.warn(
        { kernelPid: pid, droppedLines: dropped },
        `kernel[${pid}] printed more than ${KERNEL_OUTPUT_LINES_PER_S} lines a second: ${dropped} lines left out of the log`,
      ),
    );
    for (const stream of ["stdout", "stderr"] as const) {
      forEachLine(child[stream]!, (line) => {
        if (budget.take()) this.#logOutput(pid, stream, line);
      });
    }
    // Once its output has ended, the lines left out last are told at once.
    child.once("close", () => budget.flush());
    if (pid > 0) {
      // The command's words are not logged: they may hold a token (`--token …`).
      this.#log.info(
        { kernelPid: pid, kernelUrl: this.url },
        `kernel[${pid}] started (${path.basename(this.#argv[0]!)}); waiting for it to answer at ${this.url}`,
      );
      this.#emit({ type: "started", pid });
    }
    return { child, pid, exited };
  }

  /** Undefined once the kernel answers its agent card; otherwise why it did not. */
  async #waitForAnswer({ exited }: Running): Promise<string | undefined> {
    const timeoutMs = this.#options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS;
    const deadline = Date.now() + timeoutMs;
    let exit: Exit | undefined;
    void exited.then((value) => (exit = value));
    for (;;) {
      if (exit) return exit.error ? `could not be started: ${exit.error.message}` : `exited (${describeExit(exit)}) before it answered`;
      if (this.#stopping) return "was stopped before it answered";
      const remaining = deadline - Date.now();
      if (remaining <= 0) return `did not answer at ${this.url} within ${timeoutMs / 1000} s`;
      const answerTimeoutMs = Math.min(ANSWER_TIMEOUT_MS, remaining);
      if (await kernelAnswers(this.url, { timeoutMs: answerTimeoutMs, token: this.#options.token })) {
        // Something else on the port may answer: only our process counts.
        if (!exit) return undefined;
        continue;
      }
      await Promise.race([delay(POLL_INTERVAL_MS, undefined, { ref: false }), exited]);
    }
  }

  #died(running: Running, exit: Exit): void {
    if (this.#stopping || this.#running !== running) return;
    this.#running = undefined;
    // What a wrapper command left behind would hold the port the next kernel needs.
    signalGroup(running.pid, "SIGKILL");
    this.#emit({ type: "exited", pid: running.pid, code: exit.code, signal: exit.signal, expected: false });
    if (Date.now() - this.#readySince >= this.#policy.resetAfterMs) this.#failures = 0;
    const delayMs = this.#scheduleRestart();
    this.#log.error(
      { kernelPid: running.pid, exitCode: exit.code, signal: exit.signal, restartInMs: delayMs },
      `kernel[${running.pid}] exited (${describeExit(exit)}); its runs in flight end with A2A_UNAVAILABLE; restarting it in ${delayMs / 1000} s`,
    );
  }

  /** Returns the wait. */
  #scheduleRestart(): number {
    const delayMs = restartDelay(this.#failures++, this.#policy);
    this.#emit({ type: "restart-scheduled", delayMs });
    this.#restartTimer = setTimeout(() => void this.#restart(), delayMs);
    this.#restartTimer.unref();
    return delayMs;
  }

  async #restart(): Promise<void> {
    this.#restartTimer = undefined;
    if (this.#stopping) return;
    try {
      await this.#launch();
    } catch {
      // #launch has logged why.
      if (this.#stopping) return;
      const delayMs = this.#scheduleRestart();
      this.#log.warn({ restartInMs: delayMs }, `restarting the kernel in ${delayMs / 1000} s`);
    }
  }

  /** SIGTERM to the group, then SIGKILL once `graceMs` has passed without the group gone. */
  async #terminate(running: Running | undefined, graceMs = this.#options.stopGraceMs ?? DEFAULT_STOP_GRACE_MS): Promise<void> {
    if (running === undefined || running.pid < 0) return;
    const { pid, exited } = running;
    const wasRunning = running.child.exitCode === null && running.child.signalCode === null;
    if (graceMs > 0 && signalGroup(pid, "SIGTERM")) {
      const deadline = Date.now() + graceMs;
      const leaderGone = await Promise.race([exited.then(() => true), delay(graceMs, false, { ref: false })]);
      // The leader may be a wrapper whose own children are still stopping.
      while (leaderGone && (await groupAlive(pid)) && Date.now() < deadline) await delay(POLL_INTERVAL_MS / 2, undefined, { ref: false });
    }
    const killed = signalGroup(pid, "SIGKILL");
    const exit = await exited;
    if (wasRunning && this.#stopping) {
      if (killed && exit.signal === "SIGKILL" && graceMs > 0) {
        this.#log.warn({ kernelPid: pid }, `kernel[${pid}] did not stop within ${graceMs / 1000} s of SIGTERM; killed`);
      } else this.#log.info({ kernelPid: pid }, `kernel[${pid}] stopped`);
      this.#emit({ type: "exited", pid, code: exit.code, signal: exit.signal, expected: true });
    }
  }

  /** The one place kernel output reaches the log. */
  #logOutput(pid: number, stream: "stdout" | "stderr", line: string): void {
    let text = line;
    for (const secret of this.#options.secrets ?? []) if (secret) text = text.replaceAll(secret, "[redacted]");
    this.#log.info({ kernelPid: pid, stream }, `kernel[${pid}] ${stream}: ${text}`);
  }

  #emit(event: KernelEvent): void {
    this.#options.onEvent?.(event);
  }
}

function describeExit({ code, signal }: Exit): string {
  return signal ? `signal ${signal}` : `code ${code}`;
}

/** A port nothing listens on now, for the kernel to take. */
async function freePort(host: string): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
