/** Small helpers the bench sections share: statistics, clocks, child processes. */
import { fork, type ChildProcess } from "node:child_process";
import { monitorEventLoopDelay, performance } from "node:perf_hooks";

/** Milliseconds since the epoch with sub-millisecond resolution, comparable across processes on this machine. */
export const wallClockMs = (): number => performance.timeOrigin + performance.now();

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}

export const median = (values: readonly number[]): number =>
  percentile(
    [...values].sort((a, b) => a - b),
    50,
  );

export const sortNumbers = (values: number[]): number[] => values.sort((a, b) => a - b);

/**
 * Runs `a` and `b` by turns, a slice of about `sliceMs` each, for about
 * `ms` of each: [calls of a, calls of b, ms of a, ms of b]. Short turns put
 * both under the same load of a shared machine, which a long round of one
 * then a long round of the other does not.
 */
export async function alternate(
  a: () => Promise<unknown> | unknown,
  b: () => Promise<unknown> | unknown,
  { ms, sliceMs = 50 }: { ms: number; sliceMs?: number },
): Promise<[number, number, number, number]> {
  const spent = [0, 0];
  const calls = [0, 0];
  const sides = [a, b];
  while (spent[0]! < ms || spent[1]! < ms) {
    for (const side of [0, 1]) {
      const start = performance.now();
      let elapsed = 0;
      while (elapsed < sliceMs) {
        await sides[side]!();
        calls[side]!++;
        elapsed = performance.now() - start;
      }
      spent[side]! += elapsed;
    }
  }
  return [calls[0]!, calls[1]!, spent[0]!, spent[1]!];
}

/** `gc()` when the process runs with --expose-gc, twice, so finalizers' garbage goes too. */
export function collectGarbage(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  gc?.();
}

export interface Child {
  process: ChildProcess;
  /** The first message the child sent: what it announces when ready. */
  ready: Promise<Record<string, unknown>>;
  /** Sends `{type}` and waits for the child's answer of the same type. */
  ask<T = Record<string, unknown>>(type: string, extra?: Record<string, unknown>): Promise<T>;
  stop(): Promise<void>;
}

/** Forks a compiled bench module with an IPC channel; it answers `{type, ...}` messages. */
export function forkChild(modulePath: string, args: string[], execArgv: string[] = []): Child {
  const child = fork(modulePath, args, { execArgv, stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const waiting = new Map<string, Array<(message: Record<string, unknown>) => void>>();
  let announce!: (message: Record<string, unknown>) => void;
  const ready = new Promise<Record<string, unknown>>((resolve, reject) => {
    announce = resolve;
    child.once("exit", (code) => reject(new Error(`${modulePath} exited with ${code} before it was ready`)));
  });
  child.on("message", (message: Record<string, unknown>) => {
    if (message.type === "ready") return announce(message);
    const queue = waiting.get(String(message.type));
    queue?.shift()?.(message);
  });
  return {
    process: child,
    ready,
    ask<T>(type: string, extra: Record<string, unknown> = {}) {
      return new Promise<T>((resolve) => {
        const queue = waiting.get(type) ?? [];
        queue.push(resolve as (message: Record<string, unknown>) => void);
        waiting.set(type, queue);
        child.send({ type, ...extra });
      });
    },
    stop() {
      return new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      });
    },
  };
}

const loopDelay = monitorEventLoopDelay({ resolution: 1 });
loopDelay.enable();

/**
 * CPU and memory of this process, after a full GC when asked, and how late
 * its event loop ran since the last call (ms); what a child answers to `stats`.
 */
export function processStats(gc: boolean) {
  if (gc) collectGarbage();
  const delay = { p50: loopDelay.percentile(50) / 1e6, p99: loopDelay.percentile(99) / 1e6, max: loopDelay.max / 1e6 };
  loopDelay.reset();
  return { memory: process.memoryUsage(), cpu: process.cpuUsage(), at: wallClockMs(), loopDelayMs: delay };
}
