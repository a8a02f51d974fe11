/**
 * Several service instances on one Redis, as an operator runs them: a real
 * `redis-server`, one replay kernel in the test process (so a test sees
 * every call it receives and can hold a turn's line), and each instance a
 * built `dist/lib/main.js` process with a state directory of its own, so
 * the only thing they share is Redis.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createClient } from "redis";
import os from "node:os";
import path from "node:path";
import { startReplayKernel, type ReplayKernel, type ReplayKernelOptions } from "../../lib/kernel/replay-kernel.js";
import { connectRedis, type RedisConnection } from "../../lib/state/redis-connection.js";
import { RedisThreadStore } from "../../lib/state/redis-thread-store.js";
import { startRedisServer, type RedisServer } from "../../lib/testing/redis-server.js";
import { startServiceProcess, type ServiceProcess } from "../support/service-process.js";

export interface Cluster {
  redis: RedisServer;
  kernel: ReplayKernel;
  instances: ServiceProcess[];
  /** The test's own store on the same Redis, to look at what the instances left. */
  store: RedisThreadStore;
  /** The test's own connection to that Redis. */
  client: RedisConnection["client"];
  /** Starts one more instance on the same Redis and kernel. */
  startInstance(env?: Record<string, string>): Promise<ServiceProcess>;
  stop(): Promise<void>;
}

export interface ClusterOptions {
  instances: number;
  kernel?: ReplayKernelOptions;
  /** Every instance's lease TTL (IAC_CODE_AGUI_LEASE_TTL_MS); the service default when unset. */
  leaseTtlMs?: number;
}

export async function startCluster({ instances: count, kernel: kernelOptions = {}, leaseTtlMs }: ClusterOptions): Promise<Cluster> {
  const redis = await startRedisServer();
  const kernel = await startReplayKernel({ timeScale: 0, ...kernelOptions });
  const stateDirs: string[] = [];
  const instances: ServiceProcess[] = [];
  let connection: RedisConnection | undefined;
  const startInstance = async (env: Record<string, string> = {}) => {
    const stateDir = mkdtempSync(path.join(os.tmpdir(), "agui-instance-"));
    stateDirs.push(stateDir);
    const instance = await startServiceProcess({
      IAC_CODE_AGUI_A2A_URL: kernel.url,
      IAC_CODE_AGUI_REDIS_URL: redis.url,
      IAC_CODE_AGUI_STATE_DIR: stateDir,
      IAC_CODE_AGUI_ALLOWED_CWDS: os.tmpdir(),
      ...(leaseTtlMs === undefined ? {} : { IAC_CODE_AGUI_LEASE_TTL_MS: String(leaseTtlMs) }),
      ...env,
    });
    instances.push(instance);
    return instance;
  };
  try {
    for (let i = 0; i < count; i++) await startInstance();
    connection = await connectRedis(redis.url);
  } catch (error) {
    await stopAll();
    throw error;
  }

  async function stopAll() {
    for (const instance of instances.splice(0)) {
      if (instance.child.exitCode === null && instance.child.signalCode === null) instance.child.kill("SIGKILL");
      await instance.exited;
    }
    await connection?.close();
    await kernel.close();
    await redis.stop();
    for (const dir of stateDirs) rmSync(dir, { recursive: true, force: true });
  }

  const { client } = connection!;
  return { redis, kernel, instances, store: new RedisThreadStore({ client }), client, startInstance, stop: stopAll };
}

/** A promise the test settles (`open`): a kernel turn's line held until the test has done what it must while the run lives. */
export function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

/** Polls `condition` until it holds (a state reached by itself: an expiry, a reconnection), failing after `timeoutMs`. */
export async function eventually(condition: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`condition not reached within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** A script Redis ran: when by its clock, for which connection, and the command as MONITOR shows it (script text, keys, arguments). */
export interface RanScript {
  atMs: number;
  client: string;
  command: string;
}

export interface ScriptWatch {
  /** Every EVAL Redis ran since the watch began, in the order it ran them. */
  readonly ran: readonly RanScript[];
  /** Resolves with the first script `match` accepts, once Redis has run it; fails after `timeoutMs`. */
  until(what: string, match: (script: RanScript, index: number) => boolean, timeoutMs?: number): Promise<RanScript>;
  stop(): Promise<void>;
}

const MONITOR_LINE = /^(\d+)\.(\d+) \[\d+ ([^\]]+)\] "(EVAL|EVALSHA)" ([\s\S]*)$/i;

/**
 * Redis's MONITOR feed of the scripts the instances run: what the other
 * processes asked of the shared state, in the order Redis ran it. A test
 * that must show something did not happen waits here for the step that
 * would have done it (an instance's timer, its sweep) to have run.
 */
export async function watchScripts(url: string): Promise<ScriptWatch> {
  const ran: RanScript[] = [];
  const waiters = new Set<() => void>();
  const monitor = createClient({ url });
  await monitor.connect();
  await monitor.monitor((line) => {
    const parsed = MONITOR_LINE.exec(String(line));
    if (!parsed) return;
    const [, seconds, micros, client, , command] = parsed;
    ran.push({ atMs: Number(seconds) * 1000 + Math.floor(Number(micros) / 1000), client: client!, command: command! });
    waiters.forEach((wake) => wake());
  });
  return {
    ran,
    async until(what, match, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = ran.find(match);
        if (found) return found;
        if (Date.now() > deadline) throw new Error(`${what}: not run within ${timeoutMs} ms`);
        await new Promise<void>((resolve) => {
          const wake = () => {
            waiters.delete(wake);
            clearTimeout(timer);
            resolve();
          };
          const timer = setTimeout(wake, 100);
          waiters.add(wake);
        });
      }
    },
    async stop() {
      monitor.destroy();
    },
  };
}
