/**
 * Section 9: what one run holds, and how long it may hold the event loop.
 *
 *   big answer  one run whose answer is 20,000 text deltas of 16 KiB (about
 *               313 MiB of text in one message), read at full speed: the
 *               service's peak RSS above its baseline (sampled every 25 ms,
 *               baseline after a full GC), beside the raw pass-through
 *               proxy's on the same stream, by turns (which goes first
 *               alternates); the ratio is the median of the rounds'
 *               service ÷ proxy. Beside them, the service on a ten times
 *               shorter answer: a service that kept any of the answer
 *               would grow with its length, one that keeps nothing stays
 *               near the figure of the short answer. (The parse-and-re-encode
 *               proxy is no reference here: it writes without backpressure,
 *               so it holds whatever its client has not read yet.)
 *   loop delay  the service's largest event-loop delay (`monitorEventLoopDelay`,
 *               1 ms resolution) during the big run (the raw proxy's
 *               beside it: what this machine's load alone does to a
 *               process); during a resumed run whose first text is one
 *               delta of about 2 MiB that repeats everything the parked
 *               run said (contract §6), which the resume check must find
 *               without stalling every other stream of the process; and
 *               during a run with one tool result of 15 MiB, nearly the
 *               largest record the service takes (16 MiB).
 *
 * The resumed run is checked too: the client must be shown only the new
 * text. `npm run bench -- memory` runs the section alone (under a minute).
 */
import os from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { startLoopbackRig, type Path } from "./loopback.js";
import { BENCH_PERMISSION, RESUMED_SUFFIX } from "./scripted-kernel.js";
import { openStream, postSse } from "./sse-client.js";
import { median, type Child } from "./support.js";

const DELTAS = 20_000;
const DELTA_BYTES = 16 * 1024;
/** The stamp the kernel puts before the padding (`<ms>.<µs>|`) is about 18 bytes. */
const PADDING = DELTA_BYTES - 18;
/** The parked run's text, repeated by the resume in its first delta: 128 × 16 KiB = 2 MiB. */
const PARKED_DELTAS = 128;
/** The shorter answer beside the big one. */
const SHORT_DELTAS = 2_000;
const TOOL_RESULT_BYTES = 15 * 1024 * 1024;
const SAMPLE_MS = 25;

interface Stats {
  memory: NodeJS.MemoryUsage;
  loopDelayMs: { max: number };
}

export interface MemoryRound {
  servicePeakRssMiB: number;
  proxyPeakRssMiB: number;
  /** During the big runs, above the baseline: the V8 heap's committed size and the memory outside it (see `watch`). */
  servicePeakHeapMiB: number;
  servicePeakExternalMiB: number;
  proxyPeakHeapMiB: number;
  proxyPeakExternalMiB: number;
  /** The service on the answer of SHORT_DELTAS. */
  serviceShortPeakRssMiB: number;
  /** Largest event-loop delay of the service during its big run, ms. */
  serviceBigRunLoopDelayMs: number;
  proxyBigRunLoopDelayMs: number;
  /** Largest event-loop delay of the service during the resumed run, ms. */
  resumedLoopDelayMs: number;
  resumedSeconds: number;
  /** Largest event-loop delay of the service during the run with one large tool result, ms. */
  toolResultLoopDelayMs: number;
}

export interface MemoryResult {
  deltas: number;
  deltaBytes: number;
  streamMiB: number;
  /** Medians over the rounds. */
  servicePeakRssMiB: number;
  proxyPeakRssMiB: number;
  servicePeakHeapMiB: number;
  servicePeakExternalMiB: number;
  proxyPeakHeapMiB: number;
  proxyPeakExternalMiB: number;
  shortDeltas: number;
  serviceShortPeakRssMiB: number;
  /** Median over rounds of the service's peak RSS growth ÷ the raw proxy's. */
  peakRssRatio: number;
  serviceBigRunLoopDelayMs: number;
  proxyBigRunLoopDelayMs: number;
  resumedFirstTextMiB: number;
  resumedLoopDelayMs: number;
  toolResultMiB: number;
  toolResultLoopDelayMs: number;
  rounds: MemoryRound[];
  /** Every big run delivered every delta and finished; every resumed run showed only the new text. */
  complete: boolean;
}

/**
 * While `during` runs: `child`'s peak RSS above its baseline (MiB), the peaks of its V8 heap (committed) and of
 * its memory outside the heap (Buffers) above theirs, and its largest event-loop delay (ms). The two peaks say
 * where RSS growth comes from: a heap that grows under a high allocation rate (V8's young generation, emptied by
 * the full GC before the baseline, growing back) or Buffers held (reads and writes waiting).
 */
async function watch<T>(
  child: Child,
  during: () => Promise<T>,
): Promise<{ peakMiB: number; heapPeakMiB: number; externalPeakMiB: number; loopDelayMs: number; result: T }> {
  const { memory: baseline } = await child.ask<Stats>("stats", { gc: true });
  // The full GC above is a delay of its own: the histogram starts after it.
  await child.ask<Stats>("stats", { gc: false });
  let peak = baseline.rss;
  let heapPeak = baseline.heapTotal;
  let externalPeak = baseline.external;
  let loopDelayMs = 0;
  const sample = async () => {
    const stats = await child.ask<Stats>("stats", { gc: false });
    peak = Math.max(peak, stats.memory.rss);
    heapPeak = Math.max(heapPeak, stats.memory.heapTotal);
    externalPeak = Math.max(externalPeak, stats.memory.external);
    loopDelayMs = Math.max(loopDelayMs, stats.loopDelayMs.max);
  };
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      await sample();
      await sleep(SAMPLE_MS);
    }
  })();
  const result = await during();
  sampling = false;
  await sampler;
  await sample();
  const mib = (bytes: number) => bytes / 1024 / 1024;
  return {
    peakMiB: mib(peak - baseline.rss),
    heapPeakMiB: mib(heapPeak - baseline.heapTotal),
    externalPeakMiB: mib(externalPeak - baseline.external),
    loopDelayMs,
    result,
  };
}

let serial = 0;

/** A RunAgentInput on `threadId` whose user message is the kernel's script; `extra` adds a resume. */
function runBody(threadId: string, script: object, extra: object = {}): string {
  return JSON.stringify({
    threadId,
    runId: `bench-run-${process.pid}-${++serial}`,
    state: {},
    messages: [{ id: `bench-msg-${threadId}`, role: "user", content: JSON.stringify(script) }],
    tools: [],
    context: [],
    forwardedProps: { iacCode: { schemaVersion: 1, rosInvocationId: "bench", cwd: os.tmpdir() } },
    ...extra,
  });
}

/** POSTs a run and reads its whole SSE answer: the records' JSON, in order. */
function readRun(url: string, body: string): Promise<Array<{ type: string; delta?: string; outcome?: { type: string } }>> {
  return new Promise((resolve, reject) => {
    postSse(url, body, reject, (res) => {
      let text = "";
      res.on("data", (chunk: string) => (text += chunk));
      res.on("end", () => {
        if (res.statusCode !== 200) return reject(new Error(`HTTP ${res.statusCode}: ${text.slice(0, 300)}`));
        resolve(
          text
            .split("\n\n")
            .filter((record) => record.startsWith("data: "))
            .map((record) => JSON.parse(record.slice(6)) as { type: string }),
        );
      });
      res.on("error", reject);
    });
  });
}

/** A run parked on a permission after 2 MiB of text, then its resume, watched; whether the client was shown only the new text. */
async function resumedRun(service: Path, child: Child): Promise<{ loopDelayMs: number; seconds: number; onlyNewText: boolean }> {
  const threadId = `bench-resume-${process.pid}-${++serial}`;
  const script = { events: PARKED_DELTAS, padding: PADDING, park: true };
  const parked = await readRun(service.url, runBody(threadId, script));
  const end = parked.at(-1);
  if (end?.type !== "RUN_FINISHED" || end.outcome?.type !== "interrupt")
    throw new Error(`the parked run ended with ${JSON.stringify(end)}`);
  const resume = { resume: [{ interruptId: BENCH_PERMISSION, status: "resolved", payload: { decision: "allow_once" } }] };
  const started = performance.now();
  const { loopDelayMs, result } = await watch(child, () => readRun(service.url, runBody(threadId, script, resume)));
  const seconds = (performance.now() - started) / 1000;
  const shown = result
    .filter((event) => event.type === "TEXT_MESSAGE_CONTENT")
    .map((event) => event.delta)
    .join("");
  return { loopDelayMs, seconds, onlyNewText: shown === RESUMED_SUFFIX && result.at(-1)?.type === "RUN_FINISHED" };
}

export async function benchMemory({ rounds = 3 } = {}): Promise<MemoryResult> {
  const rig = await startLoopbackRig();
  const pathOf = (name: Path["name"]) => rig.paths.find((path) => path.name === name)!;
  const service = pathOf("service");
  const proxy = pathOf("proxy");
  const childOf = { service: rig.service, proxy: rig.proxy, reencode: rig.reencode };
  const answer = (events: number) => ({ events, padding: PADDING });
  try {
    // Warm-up: the code paths of a whole run, and of a pause and its resume, compiled before any baseline.
    for (const path of [service, proxy]) await openStream(path.url, path.body(answer(2_000)));
    await resumedRun(service, rig.service);
    const results: MemoryRound[] = [];
    let complete = true;
    let streamBytes = 0;
    const run = async (path: Path, events: number) => {
      await sleep(200);
      const watched = await watch(childOf[path.name], () => openStream(path.url, path.body(answer(events))));
      complete &&= watched.result.stamped === events;
      if (path.name === "service") complete &&= watched.result.last.includes('"RUN_FINISHED"');
      if (events === DELTAS) streamBytes = watched.result.bytes;
      return watched;
    };
    for (let round = 0; round < rounds; round++) {
      // Which side goes first alternates, so neither always runs on the other's garbage.
      const order = round % 2 === 0 ? [service, proxy] : [proxy, service];
      const big: Partial<Record<Path["name"], Awaited<ReturnType<typeof run>>>> = {};
      for (const path of order) big[path.name] = await run(path, DELTAS);
      const short = await run(service, SHORT_DELTAS);
      const resumed = await resumedRun(service, rig.service);
      complete &&= resumed.onlyNewText;
      const toolResult = await watch(rig.service, () =>
        openStream(service.url, service.body({ events: 1, toolResultBytes: TOOL_RESULT_BYTES })),
      );
      complete &&= toolResult.result.last.includes('"RUN_FINISHED"');
      results.push({
        servicePeakRssMiB: big.service!.peakMiB,
        proxyPeakRssMiB: big.proxy!.peakMiB,
        servicePeakHeapMiB: big.service!.heapPeakMiB,
        servicePeakExternalMiB: big.service!.externalPeakMiB,
        proxyPeakHeapMiB: big.proxy!.heapPeakMiB,
        proxyPeakExternalMiB: big.proxy!.externalPeakMiB,
        serviceShortPeakRssMiB: short.peakMiB,
        serviceBigRunLoopDelayMs: big.service!.loopDelayMs,
        proxyBigRunLoopDelayMs: big.proxy!.loopDelayMs,
        resumedLoopDelayMs: resumed.loopDelayMs,
        resumedSeconds: resumed.seconds,
        toolResultLoopDelayMs: toolResult.loopDelayMs,
      });
    }
    const medianOf = (pick: (round: MemoryRound) => number) => median(results.map(pick));
    return {
      deltas: DELTAS,
      deltaBytes: DELTA_BYTES,
      streamMiB: streamBytes / 1024 / 1024,
      servicePeakRssMiB: medianOf((round) => round.servicePeakRssMiB),
      proxyPeakRssMiB: medianOf((round) => round.proxyPeakRssMiB),
      servicePeakHeapMiB: medianOf((round) => round.servicePeakHeapMiB),
      servicePeakExternalMiB: medianOf((round) => round.servicePeakExternalMiB),
      proxyPeakHeapMiB: medianOf((round) => round.proxyPeakHeapMiB),
      proxyPeakExternalMiB: medianOf((round) => round.proxyPeakExternalMiB),
      shortDeltas: SHORT_DELTAS,
      serviceShortPeakRssMiB: medianOf((round) => round.serviceShortPeakRssMiB),
      peakRssRatio: medianOf((round) => round.servicePeakRssMiB / round.proxyPeakRssMiB),
      serviceBigRunLoopDelayMs: medianOf((round) => round.serviceBigRunLoopDelayMs),
      proxyBigRunLoopDelayMs: medianOf((round) => round.proxyBigRunLoopDelayMs),
      resumedFirstTextMiB: (PARKED_DELTAS * DELTA_BYTES) / 1024 / 1024,
      resumedLoopDelayMs: medianOf((round) => round.resumedLoopDelayMs),
      toolResultMiB: TOOL_RESULT_BYTES / 1024 / 1024,
      toolResultLoopDelayMs: medianOf((round) => round.toolResultLoopDelayMs),
      rounds: results,
      complete,
    };
  } finally {
    await rig.stop();
  }
}

/** The section's rows of the bench table. */
export function memoryRows(result: MemoryResult): Array<[string, string, string, string, string, string]> {
  const n = (value: number, digits = 1) => value.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });
  const met = (ok: boolean) => (ok ? "yes" : "**no**");
  const spread = (pick: (round: MemoryRound) => number, digits = 1) => {
    const values = result.rounds.map(pick);
    return `${n(Math.min(...values), digits)}–${n(Math.max(...values), digits)}`;
  };
  const incomplete = result.complete ? "" : " (**incomplete**)";
  return [
    [
      `one run of ${n(result.deltas, 0)} deltas × ${result.deltaBytes / 1024} KiB: service peak RSS growth (MiB)`,
      n(result.servicePeakRssMiB),
      `${n(result.streamMiB, 0)} MiB stream at full speed; raw proxy: ${n(result.proxyPeakRssMiB)}; peak heap / outside-heap growth: service ${n(result.servicePeakHeapMiB)} / ${n(result.servicePeakExternalMiB)}, raw proxy ${n(result.proxyPeakHeapMiB)} / ${n(result.proxyPeakExternalMiB)}; service on ${n(result.shortDeltas, 0)} deltas: ${n(result.serviceShortPeakRssMiB)}; rounds ${spread((round) => round.servicePeakRssMiB / round.proxyPeakRssMiB, 2)}${incomplete}`,
      n(result.peakRssRatio, 2),
      "≤ 2",
      met(result.peakRssRatio <= 2),
    ],
    [
      `  event-loop delay, max during that run (ms)`,
      n(result.serviceBigRunLoopDelayMs),
      `raw proxy: ${n(result.proxyBigRunLoopDelayMs)}; rounds ${spread((round) => round.serviceBigRunLoopDelayMs)}`,
      n(result.serviceBigRunLoopDelayMs),
      "< 50",
      met(result.serviceBigRunLoopDelayMs < 50),
    ],
    [
      `event-loop delay, max during a resumed run whose first text is ${n(result.resumedFirstTextMiB, 0)} MiB (ms)`,
      n(result.resumedLoopDelayMs),
      `only the new text shown: ${result.complete ? "yes" : "**no**"}; rounds ${spread((round) => round.resumedLoopDelayMs)}`,
      n(result.resumedLoopDelayMs),
      "< 50",
      met(result.resumedLoopDelayMs < 50),
    ],
    [
      `event-loop delay, max during a run with one ${n(result.toolResultMiB, 0)} MiB tool result (ms)`,
      n(result.toolResultLoopDelayMs),
      `rounds ${spread((round) => round.toolResultLoopDelayMs)}`,
      n(result.toolResultLoopDelayMs),
      "< 50",
      met(result.toolResultLoopDelayMs < 50),
    ],
  ];
}
