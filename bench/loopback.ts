/**
 * Section 2: end to end on loopback, kernel SSE → service → client, beside
 * kernel SSE → raw pass-through proxy → client. Kernel, service and proxies
 * each run in their own process (`scripted-kernel.ts`, `service-child.ts`,
 * `sse-proxy.ts` in both its modes); the client is this process.
 *
 *   throughput  `streams` streams at once, each `events` deltas sent back
 *               to back (the kernel honours backpressure): deltas received
 *               per second over the whole batch; the ratio is the median
 *               over rounds of each round's service ÷ proxy
 *   latency     100 streams at once, each one delta every `intervalMs`: the
 *               kernel stamps the send time in the delta, the client reads
 *               it on arrival; both read one machine clock. Added latency at
 *               pXX = service pXX − proxy pXX, within a round; the median
 *               over rounds is reported. Each stream's first
 *               `latencySkip` deltas (its first second) are left out: they
 *               measure 100 runs being admitted at once, not delivery.
 *
 * Throughput also runs a third path, the parse-and-re-encode proxy
 * (`sse-proxy.ts`, `reencode`): the raw proxy plus JSON.parse and
 * JSON.stringify of each record, the least work any adapter must do.
 *
 * Rounds alternate between the paths and are short, so the load of a
 * shared machine hits the paths of one round alike; every round's figures
 * are in `bench/results.json`.
 */
import os from "node:os";
import { forkChild, median, percentile, sortNumbers, wallClockMs, type Child } from "./support.js";
import { openStream, type StreamOutcome } from "./sse-client.js";

const here = new URL(".", import.meta.url).pathname;
let serial = 0;

/** A RunAgentInput whose user message is the kernel's script. */
function runBody(script: object): string {
  const id = `${process.pid}-${++serial}`;
  return JSON.stringify({
    threadId: `bench-thread-${id}`,
    runId: `bench-run-${id}`,
    state: {},
    messages: [{ id: `bench-msg-${id}`, role: "user", content: JSON.stringify(script) }],
    tools: [],
    context: [],
    forwardedProps: { iacCode: { schemaVersion: 1, rosInvocationId: "bench", cwd: os.tmpdir() } },
  });
}

/** The JSON-RPC call a client of the kernel itself sends, for the proxy path. */
function rpcBody(script: object): string {
  const id = `${process.pid}-${++serial}`;
  return JSON.stringify({
    jsonrpc: "2.0",
    id,
    method: "SendStreamingMessage",
    params: {
      message: {
        messageId: `bench-msg-${id}`,
        role: "ROLE_USER",
        contextId: `bench-context-${id}`,
        parts: [{ text: JSON.stringify(script) }],
      },
    },
  });
}

export interface Path {
  name: "service" | "proxy" | "reencode";
  url: string;
  body: (script: object) => string;
}

async function batch(path: Path, streams: number, script: object, skipFirst = 0): Promise<{ outcomes: StreamOutcome[]; seconds: number }> {
  const start = wallClockMs();
  const outcomes = await Promise.all(Array.from({ length: streams }, () => openStream(path.url, path.body(script), { skipFirst })));
  return { outcomes, seconds: (wallClockMs() - start) / 1000 };
}

interface Percentiles {
  p50: number;
  p99: number;
}

export interface LatencyRound {
  samples: { service: number; proxy: number };
  serviceMs: Percentiles;
  proxyMs: Percentiles;
  /** Service minus proxy, at each percentile. */
  addedMs: Percentiles;
}

function latencyRound(service: number[], proxy: number[]): LatencyRound {
  const at = (sorted: number[]): Percentiles => ({ p50: percentile(sorted, 50), p99: percentile(sorted, 99) });
  const serviceMs = at(service);
  const proxyMs = at(proxy);
  return {
    samples: { service: service.length, proxy: proxy.length },
    serviceMs,
    proxyMs,
    addedMs: { p50: serviceMs.p50 - proxyMs.p50, p99: serviceMs.p99 - proxyMs.p99 },
  };
}

export interface LoopbackResult {
  throughput: {
    streams: number;
    eventsPerStream: number;
    rounds: number;
    serviceEventsPerSecond: number;
    proxyEventsPerSecond: number;
    /** Median over rounds of service ÷ raw proxy, each measured back to back. */
    ratio: number;
    ratioPerRound: number[];
    /** The parse-and-re-encode proxy: what is left of the raw proxy's rate once each record's JSON is read. */
    reencodeEventsPerSecond: number;
    reencodeRatio: number;
    reencodeRatioPerRound: number[];
    /** Service ÷ parse-and-re-encode proxy, round by round: what the service adds over the least a parsing bridge must do. */
    ratioToReencode: number;
    ratioToReencodePerRound: number[];
  };
  /** Each figure is the median over rounds; a round is the service then the proxy, back to back. */
  latency: {
    streams: number;
    intervalMs: number;
    rounds: LatencyRound[];
    serviceMs: Percentiles;
    proxyMs: Percentiles;
    addedMs: Percentiles;
  };
}

export async function startLoopbackRig(
  heartbeatMs = 15_000,
  serviceExecArgv: string[] = [],
): Promise<{ kernel: Child; service: Child; proxy: Child; reencode: Child; paths: Path[]; stop(): Promise<void> }> {
  const kernel = forkChild(`${here}scripted-kernel.js`, []);
  const { url: kernelUrl } = (await kernel.ready) as { url: string };
  const service = forkChild(`${here}service-child.js`, [kernelUrl, String(heartbeatMs)], ["--expose-gc", ...serviceExecArgv]);
  const proxy = forkChild(`${here}sse-proxy.js`, [kernelUrl], ["--expose-gc"]);
  const reencode = forkChild(`${here}sse-proxy.js`, [kernelUrl, "reencode"], ["--expose-gc"]);
  const { url: serviceUrl } = (await service.ready) as { url: string };
  const { url: proxyUrl } = (await proxy.ready) as { url: string };
  const { url: reencodeUrl } = (await reencode.ready) as { url: string };
  const paths: Path[] = [
    { name: "proxy", url: proxyUrl, body: rpcBody },
    { name: "service", url: `${serviceUrl}/`, body: runBody },
    { name: "reencode", url: reencodeUrl, body: rpcBody },
  ];
  return {
    kernel,
    service,
    proxy,
    reencode,
    paths,
    stop: async () => void (await Promise.all([service.stop(), proxy.stop(), reencode.stop(), kernel.stop()])),
  };
}

export async function benchLoopback({
  throughputRounds = 7,
  latencyRounds = 9,
  streams = 20,
  events = 2_000,
  latencyStreams = 100,
  intervalMs = 50,
  latencyEvents = 80,
  latencySkip = 20,
} = {}): Promise<LoopbackResult> {
  const rig = await startLoopbackRig();
  try {
    const rates: Record<Path["name"], number[]> = { service: [], proxy: [], reencode: [] };
    const timed = rig.paths.filter((path) => path.name !== "reencode");
    // Warm-up: connections, the service's state directory, then one batch of the rounds' own size, so that the
    // JIT has compiled what a long answer runs in every process before a round counts (as `peer.ts` does).
    for (const path of rig.paths) await batch(path, streams, { events: 200 });
    for (const path of rig.paths) await batch(path, streams, { events });
    for (let round = 0; round < throughputRounds; round++) {
      for (const path of rig.paths) {
        const { outcomes, seconds } = await batch(path, streams, { events });
        const received = outcomes.reduce((sum, outcome) => sum + outcome.stamped, 0);
        if (received !== streams * events) throw new Error(`${path.name}: ${received} of ${streams * events} deltas arrived`);
        rates[path.name].push(received / seconds);
      }
    }
    const rounds: LatencyRound[] = [];
    for (let round = 0; round < latencyRounds; round++) {
      const sorted: Partial<Record<Path["name"], number[]>> = {};
      for (const path of timed) {
        const { outcomes } = await batch(path, latencyStreams, { events: latencyEvents, intervalMs }, latencySkip);
        sorted[path.name] = sortNumbers(outcomes.flatMap((outcome) => outcome.latencies));
      }
      rounds.push(latencyRound(sorted.service!, sorted.proxy!));
    }
    // Each round's paths ran back to back, so a round's ratio (or difference) is the least disturbed figure; the median of the rounds is reported.
    const pairedRatios = (path: Path["name"]) => rates[path].map((rate, round) => rate / rates.proxy[round]!);
    const medianOf = (pick: (round: LatencyRound) => number) => median(rounds.map(pick));
    return {
      throughput: {
        streams,
        eventsPerStream: events,
        rounds: throughputRounds,
        serviceEventsPerSecond: median(rates.service),
        proxyEventsPerSecond: median(rates.proxy),
        ratio: median(pairedRatios("service")),
        ratioPerRound: pairedRatios("service"),
        reencodeEventsPerSecond: median(rates.reencode),
        reencodeRatio: median(pairedRatios("reencode")),
        reencodeRatioPerRound: pairedRatios("reencode"),
        ratioToReencode: median(rates.service.map((rate, round) => rate / rates.reencode[round]!)),
        ratioToReencodePerRound: rates.service.map((rate, round) => rate / rates.reencode[round]!),
      },
      latency: {
        streams: latencyStreams,
        intervalMs,
        rounds,
        serviceMs: { p50: medianOf((round) => round.serviceMs.p50), p99: medianOf((round) => round.serviceMs.p99) },
        proxyMs: { p50: medianOf((round) => round.proxyMs.p50), p99: medianOf((round) => round.proxyMs.p99) },
        addedMs: { p50: medianOf((round) => round.addedMs.p50), p99: medianOf((round) => round.addedMs.p99) },
      },
    };
  } finally {
    await rig.stop();
  }
}
