/**
 * Section 3: many open streams, idle apart from heartbeats. The service (in
 * its own process, with --expose-gc) sits in front of the scripted kernel,
 * whose streams send their opening frames and one line of text, then
 * nothing. The client holds every stream open. Per stream: the service's
 * RSS and heap growth after a full GC; while idle: the service's CPU over
 * a window, with heartbeats due every `heartbeatMs`. Then the same streams
 * through the raw pass-through proxy, for the floor: what two open
 * connections per stream cost a Node process that does nothing else.
 */
import http from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { startLoopbackRig, type Path } from "./loopback.js";
import type { Child } from "./support.js";
import { agent } from "./sse-client.js";

interface Stats {
  memory: NodeJS.MemoryUsage;
  cpu: NodeJS.CpuUsage;
  at: number;
  loopDelayMs: { p50: number; p99: number; max: number };
}

export interface IdleResult {
  streams: number;
  heartbeatMs: number;
  rssPerStreamKiB: number;
  heapPerStreamKiB: number;
  /** The raw pass-through proxy holding as many idle streams: what two connections cost in Node, with nothing else. */
  proxyRssPerStreamKiB: number;
  proxyHeapPerStreamKiB: number;
  idleCpuPercent: number;
  idleWindowS: number;
  heartbeatsPerSecond: number;
}

/** Opens one stream and resolves once its first text has arrived; the response stays open. */
export function openIdle(url: string, body: string, held: http.IncomingMessage[]): Promise<void> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const request = http.request(
      { host: target.hostname, port: target.port, path: "/", method: "POST", agent, headers: { "content-type": "application/json" } },
      (res) => {
        held.push(res);
        res.setEncoding("utf8");
        let seen = "";
        const onData = (chunk: string) => {
          seen += chunk;
          if (seen.includes('"idle"')) {
            res.off("data", onData);
            // Keep reading (heartbeats), without keeping what is read.
            res.on("data", () => {});
            resolve();
          }
        };
        res.on("data", onData);
        res.on("error", () => {});
      },
    );
    request.on("error", reject);
    request.end(body);
  });
}

/** Opens `streams` idle streams through `path` and gives `child`'s memory before (after a warm-up) and with them open, both after a full GC. */
async function openIdleStreams(
  path: Path,
  child: Child,
  streams: number,
  held: http.IncomingMessage[],
): Promise<{ before: Stats; open: Stats }> {
  // Warm-up: a few streams opened and closed, so code paths are compiled before the baseline.
  await Promise.all(Array.from({ length: 50 }, () => openIdle(path.url, path.body({ idle: true }), held)));
  held.splice(0).forEach((res) => res.destroy());
  await sleep(500);
  const before = await child.ask<Stats>("stats", { gc: true });
  for (let opened = 0; opened < streams; opened += 250) {
    const wave = Math.min(250, streams - opened);
    await Promise.all(Array.from({ length: wave }, () => openIdle(path.url, path.body({ idle: true }), held)));
  }
  // Settle: every run admitted and written, then a full GC.
  await sleep(1_000);
  const open = await child.ask<Stats>("stats", { gc: true });
  return { before, open };
}

export async function benchIdleStreams(counts = [1_000, 5_000], { heartbeatMs = 2_000, idleWindowMs = 6_000 } = {}): Promise<IdleResult[]> {
  const results: IdleResult[] = [];
  for (const streams of counts) {
    const rig = await startLoopbackRig(heartbeatMs);
    const pathOf = (name: Path["name"]) => rig.paths.find((path) => path.name === name)!;
    const held: http.IncomingMessage[] = [];
    try {
      const { before, open } = await openIdleStreams(pathOf("service"), rig.service, streams, held);
      await sleep(idleWindowMs);
      const after = await rig.service.ask<Stats>("stats", { gc: false });
      const cpuMs = (after.cpu.user + after.cpu.system - open.cpu.user - open.cpu.system) / 1000;
      held.splice(0).forEach((res) => res.destroy());
      // The floor: the raw proxy holding the same streams (two connections each, nothing else).
      const proxy = await openIdleStreams(pathOf("proxy"), rig.proxy, streams, held);
      results.push({
        streams,
        heartbeatMs,
        rssPerStreamKiB: (open.memory.rss - before.memory.rss) / streams / 1024,
        heapPerStreamKiB: (open.memory.heapUsed - before.memory.heapUsed) / streams / 1024,
        proxyRssPerStreamKiB: (proxy.open.memory.rss - proxy.before.memory.rss) / streams / 1024,
        proxyHeapPerStreamKiB: (proxy.open.memory.heapUsed - proxy.before.memory.heapUsed) / streams / 1024,
        idleCpuPercent: (100 * cpuMs) / (after.at - open.at),
        idleWindowS: (after.at - open.at) / 1000,
        heartbeatsPerSecond: streams / (heartbeatMs / 1000),
      });
    } finally {
      held.forEach((res) => res.destroy());
      await rig.stop();
    }
  }
  return results;
}
