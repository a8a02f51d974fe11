/**
 * Section 5: a client slower than its kernel. The scripted kernel sends
 * 20,000 text deltas of about 1 KiB back to back (about 23 MiB of A2A
 * records, honouring backpressure); the client takes 64 KiB, then waits
 * 20 ms (about 3 MiB/s). The service's RSS is sampled every 25 ms, and
 * the figure is its peak above the baseline (after a warm-up run and a
 * full GC). The same run read at full speed gives the reference: the
 * garbage any run of that size leaves before a GC, which is most of the
 * figure; the slow client should cost no more than that. The raw
 * pass-through proxy with the same slow client gives the floor (Node's
 * own stream piping, with its backpressure). Without backpressure the
 * whole stream (about 21 MiB of SSE) would wait in the service on top.
 */
import type http from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { startLoopbackRig, type Path } from "./loopback.js";
import { openStream, type StreamOutcome } from "./sse-client.js";
import type { Child } from "./support.js";

export interface SlowClientResult {
  deltas: number;
  streamMiB: number;
  /** The client's pace: bytes taken per burst, and the pause after each. */
  burstKiB: number;
  pauseMs: number;
  seconds: number;
  servicePeakRssMiB: number;
  serviceFastPeakRssMiB: number;
  proxyPeakRssMiB: number;
  /** Whether the slow client got every delta and the run's end. */
  complete: boolean;
}

const DELTAS = 20_000;
const PADDING = 1_000;
const BURST_BYTES = 64 * 1024;
const PAUSE_MS = 20;
const SAMPLE_MS = 25;

interface Stats {
  memory: NodeJS.MemoryUsage;
}

/** Reads `res` in bursts of BURST_BYTES with PAUSE_MS between them. */
function readSlowly(res: http.IncomingMessage): void {
  let taken = 0;
  res.on("data", (chunk: string) => {
    taken += chunk.length;
    if (taken < BURST_BYTES) return;
    taken = 0;
    res.pause();
    setTimeout(() => res.resume(), PAUSE_MS);
  });
}

/** One run through `path`; the peak of `child`'s RSS above its baseline while it lasts, in MiB. */
async function peakDuring(path: Path, child: Child, slow: boolean): Promise<{ peakMiB: number; outcome: StreamOutcome; seconds: number }> {
  await child.ask("stats", { gc: true });
  await sleep(200);
  const baseline = (await child.ask<Stats>("stats", { gc: true })).memory.rss;
  let peak = baseline;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      peak = Math.max(peak, (await child.ask<Stats>("stats", { gc: false })).memory.rss);
      await sleep(SAMPLE_MS);
    }
  })();
  const started = performance.now();
  const outcome = await openStream(path.url, path.body({ events: DELTAS, padding: PADDING }), slow ? { keepOpen: readSlowly } : {});
  const seconds = (performance.now() - started) / 1000;
  sampling = false;
  await sampler;
  return { peakMiB: (peak - baseline) / 1024 / 1024, outcome, seconds };
}

export async function benchSlowClient(): Promise<SlowClientResult> {
  const rig = await startLoopbackRig();
  const pathOf = (name: Path["name"]) => rig.paths.find((path) => path.name === name)!;
  try {
    const service = pathOf("service");
    // Warm-up: the code paths of a whole run compiled before the baseline.
    await openStream(service.url, service.body({ events: 2_000, padding: PADDING }));
    const fast = await peakDuring(service, rig.service, false);
    const slow = await peakDuring(service, rig.service, true);
    const proxy = await peakDuring(pathOf("proxy"), rig.proxy, true);
    return {
      deltas: DELTAS,
      streamMiB: slow.outcome.bytes / 1024 / 1024,
      burstKiB: BURST_BYTES / 1024,
      pauseMs: PAUSE_MS,
      seconds: slow.seconds,
      servicePeakRssMiB: slow.peakMiB,
      serviceFastPeakRssMiB: fast.peakMiB,
      proxyPeakRssMiB: proxy.peakMiB,
      complete: slow.outcome.stamped === DELTAS && slow.outcome.last.includes('"RUN_FINISHED"'),
    };
  } finally {
    await rig.stop();
  }
}
