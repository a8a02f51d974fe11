/**
 * A real `redis-server` (Debian's package; `.ci/run` installs it) for one
 * test file or bench section: on a free loopback port, in a temporary
 * directory of its own, with append-only persistence so a restart keeps
 * what was written, as a Redis configured to persist would. Stopped (and
 * its directory removed) by `stop()`.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";

export interface RedisServer {
  /** `redis://127.0.0.1:<port>/0`. */
  url: string;
  port: number;
  /** Stops the server (SIGTERM, so it writes its append-only file) and resolves once it has exited. */
  halt(): Promise<void>;
  /** Starts it again on the same port and directory, with what it had persisted. */
  restart(): Promise<void>;
  /** Halts it and removes its directory. */
  stop(): Promise<void>;
  /** Stops the process (SIGSTOP): up and connected, but silent, as a hung host or a cut network looks. */
  pause(): void;
  /** Lets a paused process go on (SIGCONT): it answers what it was sent meanwhile, in order. */
  resume(): void;
}

const REDIS_SERVER = "redis-server";

/** Whether `redis-server` is on PATH: without it the tests fail with a message saying how to get it. */
export function redisServerAvailable(): boolean {
  return spawnSync(REDIS_SERVER, ["--version"], { stdio: "ignore" }).status === 0;
}

/** A port nobody listens on right now (the OS picks it). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export async function startRedisServer(): Promise<RedisServer> {
  if (!redisServerAvailable()) {
    throw new Error("redis-server is not installed: `apt-get install redis-server` (.ci/run does this in CI)");
  }
  const dir = mkdtempSync(path.join(tmpdir(), "iac-code-agui-redis-"));
  const port = await freePort();
  let child: ChildProcess | undefined;

  const start = () =>
    new Promise<void>((resolve, reject) => {
      const started = spawn(
        REDIS_SERVER,
        ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--appendonly", "yes", "--appendfsync", "always", "--save", ""],
        { stdio: ["ignore", "pipe", "pipe"] },
      );
      child = started;
      let output = "";
      createInterface({ input: started.stdout! }).on("line", (line) => {
        output += `${line}\n`;
        if (/Ready to accept connections/.test(line)) resolve();
      });
      started.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
      started.once("exit", (code, signal) => reject(new Error(`redis-server exited (${code ?? signal}) before it was ready:\n${output}`)));
    });

  const halt = async () => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => running.once("exit", () => resolve()));
    running.kill("SIGTERM");
    // A paused server acts on the SIGTERM only once it runs again.
    running.kill("SIGCONT");
    await exited;
  };

  const signal = (name: NodeJS.Signals) => {
    if (!child) throw new Error("redis-server is not running");
    child.kill(name);
  };

  await start();
  return {
    url: `redis://127.0.0.1:${port}/0`,
    port,
    halt,
    restart: start,
    pause: () => signal("SIGSTOP"),
    resume: () => signal("SIGCONT"),
    async stop() {
      await halt();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
