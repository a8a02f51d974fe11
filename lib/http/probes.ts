/**
 * What load balancers and orchestrators probe, without a token (they send
 * none) and whatever Host they name: a probe by pod IP or by a name only
 * the load balancer knows must not be refused as another site (the Host
 * check of `origin-guard.ts` runs after these two, for every other route).
 * Neither says anything a rebinding page could use:
 * - `GET /health`: the process serves HTTP (R-HTTP-1). Protocol and version
 *   facts only: no URL, path, token or setting; and the agent it is in front
 *   of, as its card names it, with the A2A dialect spoken to it.
 * - `GET /ready`: it can take runs now: the kernel answers its agent card,
 *   a file can be written where thread state lives, and no shutdown is under
 *   way. 200 `{ready: true, kernel: "ok", stateDir: "ok"}`, else 503 with
 *   the check that failed (`"failed"`) and `draining: true` during a
 *   shutdown.
 * Each check runs at most once a second, however many probes ask, and
 * within a second of wall time, so a probe every few seconds costs nothing.
 */
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { lstat, mkdir, unlink, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { PROTOCOL_VERSION } from "@ag-ui/core";
import { Router } from "express";
import type { KernelAgent } from "../a2a/dialect.js";
import { kernelAnswers } from "../kernel-process/agent-card.js";
import { SERVICE_VERSION } from "../version.js";

/** How long a check's answer is reused. */
export const PROBE_CACHE_MS = 1000;
/** How long the kernel has to answer its agent card for `/ready`. */
export const KERNEL_PROBE_TIMEOUT_MS = 1000;

export interface Readiness {
  /** Whether the kernel answers now. */
  kernel(): Promise<boolean>;
  /** Whether thread state can be written now. */
  stateDir(): Promise<boolean>;
  /** Whether a shutdown has begun (new runs are refused). */
  draining(): boolean;
  /** The agent as last read from its card; undefined while it has not been read (see `a2a/dialect.ts`). */
  agent?(): KernelAgent | undefined;
}

export interface ReadinessOptions {
  kernelUrl: string;
  /** The kernel's token, sent as on every kernel call. */
  kernelToken?: string | undefined;
  /** The directory thread files are written to (the store's `threadsDir`). */
  threadsDir: string;
  /** A store elsewhere (Redis): whether it answers, checked instead of a write in `threadsDir`. */
  stateAvailable?: () => Promise<boolean>;
  draining: () => boolean;
  agent?: () => KernelAgent | undefined;
  now?: () => number;
}

export function readinessChecks({
  kernelUrl,
  kernelToken,
  threadsDir,
  stateAvailable,
  draining,
  agent,
  now = Date.now,
}: ReadinessOptions): Readiness {
  return {
    kernel: cachedCheck(() => kernelAnswers(kernelUrl, { timeoutMs: KERNEL_PROBE_TIMEOUT_MS, token: kernelToken }), now),
    stateDir: cachedCheck(stateAvailable ?? (() => canWriteIn(threadsDir)), now),
    draining,
    ...(agent ? { agent } : {}),
  };
}

/**
 * A check whose answer is shared: callers within `ttlMs` of the last
 * answer get it, and callers while it runs wait for the same run.
 */
export function cachedCheck(check: () => Promise<boolean>, now: () => number = Date.now, ttlMs = PROBE_CACHE_MS): () => Promise<boolean> {
  let last: { answer: Promise<boolean>; at: number } | undefined;
  return () => {
    if (last === undefined || now() - last.at >= ttlMs) {
      const answer = check().catch(() => false);
      const entry = { answer, at: now() };
      last = entry;
      // Counted from the answer, not the question, so a slow check is not run again at once.
      void answer.then(() => (entry.at = now()));
    }
    return last.answer;
  };
}

/**
 * A real write where the store writes: the directory made as the store
 * makes it (0700, a real directory, not a symlink), a probe file created
 * and removed. Its name holds `~` and does not end in `.json`, so it can
 * never be read as a thread's state (see `thread-file-stem.ts`).
 */
async function canWriteIn(dir: string): Promise<boolean> {
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    if (!(await lstat(dir)).isDirectory()) return false;
    const probe = path.join(dir, `~ready-${process.pid}-${randomBytes(8).toString("hex")}.probe`);
    await writeFile(probe, "", { flag: "wx", mode: 0o600 });
    await unlink(probe);
    return true;
  } catch {
    return false;
  }
}

/** The version of the AG-UI package the events are made with, read from its package.json (its exports do not name it). */
function agUiPackageVersion(): string | undefined {
  try {
    for (
      let dir = path.dirname(createRequire(import.meta.url).resolve("@ag-ui/core"));
      path.dirname(dir) !== dir;
      dir = path.dirname(dir)
    ) {
      const manifest = path.join(dir, "package.json");
      if (!existsSync(manifest)) continue;
      const { name, version } = JSON.parse(readFileSync(manifest, "utf8")) as { name?: string; version?: string };
      if (name === "@ag-ui/core") return version;
    }
  } catch {
    // Left out of /health rather than failing it.
  }
  return undefined;
}

const HEALTH = {
  status: "ok",
  protocol: "ag-ui",
  protocolVersion: PROTOCOL_VERSION,
  executionKernel: "a2a-1.0",
  version: SERVICE_VERSION,
  // The reference adapter's names for the same facts, so a monitor written for it reads this one unchanged.
  protocolPackageVersion: agUiPackageVersion(),
  serverVersion: SERVICE_VERSION,
};

/** `/health`'s answer: the dialect in `executionKernel` and `agent`, with the name and version the agent's card gives. */
export function healthOf(agent: KernelAgent | undefined): Record<string, unknown> {
  if (agent === undefined) return HEALTH;
  const { dialect, name, version } = agent;
  return {
    ...HEALTH,
    executionKernel: `a2a-${dialect}`,
    agent: { a2aDialect: dialect, ...(name ? { name } : {}), ...(version ? { version } : {}) },
  };
}

/** `/health`, and `/ready` when the service gives it its checks. */
export function probeRoutes(readiness: Readiness | undefined): Router {
  const router = Router();
  router.get("/health", (_req, res) => {
    res.json(healthOf(readiness?.agent?.()));
  });
  if (readiness === undefined) return router;
  router.get("/ready", async (_req, res) => {
    const [kernel, stateDir] = await Promise.all([readiness.kernel(), readiness.stateDir()]);
    const draining = readiness.draining();
    const ready = kernel && stateDir && !draining;
    res
      .status(ready ? 200 : 503)
      .set("Cache-Control", "no-store")
      .json({ ready, kernel: kernel ? "ok" : "failed", stateDir: stateDir ? "ok" : "failed", ...(draining ? { draining } : {}) });
  });
  return router;
}
