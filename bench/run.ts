/**
 * `npm run bench`: every section in turn, a table on stdout, and
 * `bench/results.json`. Each ratio compares two figures measured in this
 * same run, so the noise of a shared machine cancels out. What each
 * section measures, and how to read it, is in `bench/README.md`.
 */
import { writeFileSync } from "node:fs";
import os from "node:os";
import { benchDialect, dialectRows } from "./dialect.js";
import { benchInstances, instancesRows } from "./instances.js";
import { benchRedisStore, redisStoreRows } from "./redis-store.js";
import { benchIdleStreams } from "./idle-streams.js";
import { benchLoopback } from "./loopback.js";
import { benchMemory, memoryRows } from "./memory.js";
import { benchOperatorChain } from "./operator-chain.js";
import { benchPeer, peerRows } from "./peer.js";
import { benchSlowClient } from "./slow-client.js";
import { benchThreadStore } from "./thread-store.js";

const RESULTS = new URL("../../bench/results.json", import.meta.url);
const started = Date.now();
const log = (message: string) => console.error(`[bench ${((Date.now() - started) / 1000).toFixed(0).padStart(3)} s] ${message}`);

/**
 * `npm run bench -- chain store` (or `BENCH_SECTIONS=chain,store`) runs those sections alone, for working on one;
 * without either, every section runs. A partial run prints its rows but leaves `bench/results.json` alone.
 */
const SECTIONS = ["chain", "loopback", "idle", "store", "slow", "dialect", "redis", "instances", "memory", "peer"] as const;
type Section = (typeof SECTIONS)[number];
const asked = [...process.argv.slice(2), ...(process.env.BENCH_SECTIONS ?? "").split(",")].map((name) => name.trim()).filter(Boolean);
const unknown = asked.filter((name) => !(SECTIONS as readonly string[]).includes(name));
if (unknown.length > 0) {
  console.error(`bench: no section ${unknown.join(", ")}; the sections are ${SECTIONS.join(", ")}`);
  process.exit(2);
}
const selected = new Set<string>(asked.length > 0 ? asked : SECTIONS);
const everySection = selected.size === SECTIONS.length;
let step = 0;
/** The section's figures, or undefined when it was not asked for. */
async function section<T>(name: Section, title: string, measure: () => Promise<T>): Promise<T | undefined> {
  if (!selected.has(name)) return undefined;
  log(`${++step}/${selected.size} ${title}`);
  return measure();
}

const chain = await section("chain", "operator chain", benchOperatorChain);
const loopback = await section("loopback", "end to end on loopback", benchLoopback);
const idle = await section("idle", "idle streams", benchIdleStreams);
const store = await section("store", "thread store", benchThreadStore);
const slow = await section("slow", "slow client", benchSlowClient);
const dialect = await section("dialect", "A2A 0.3 beside 1.0", () => benchDialect());
const redisStore = await section("redis", "admission with the Redis store beside the file store", () => benchRedisStore());
const instances = await section("instances", "two instances on Redis beside one", () => benchInstances());
const memory = await section("memory", "one long answer and one long resumed text", () => benchMemory());
const peer = await section("peer", "beside the nearest peer, @ag-ui/a2a", () => benchPeer());

type Row = [measure: string, value: string, reference: string, result: string, target: string, met: string];
const n = (value: number, digits = 0) => value.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });
/** The lowest and highest of a figure's rounds. */
const spread = (values: readonly number[]) => `${n(Math.min(...values), 2)}–${n(Math.max(...values), 2)}`;
const check = (ok: boolean | undefined) => (ok === undefined ? "–" : ok ? "yes" : "**no**");
const rows: Row[] = [
  ...(chain === undefined
    ? []
    : ([
        [
          `operator chain, \`${chain.fixture}\` fixture (frames/s)`,
          n(chain.pipelineFramesPerSecond),
          `JSON parse+stringify: ${n(chain.baselineFramesPerSecond)}`,
          n(chain.ratio, 2),
          "≥ 0.7",
          check(chain.ratio >= 0.7),
        ],
        [
          "heartbeat operator (items/s)",
          n(chain.heartbeat.newItemsPerSecond),
          `re-arming per item: ${n(chain.heartbeat.rearmingItemsPerSecond)}`,
          `${n(chain.heartbeat.ratio, 1)}×`,
          "–",
          "–",
        ],
      ] satisfies Row[])),
  ...(loopback === undefined
    ? []
    : ([
        [
          `end to end, ${loopback.throughput.streams} streams (events/s)`,
          n(loopback.throughput.serviceEventsPerSecond),
          `raw SSE proxy: ${n(loopback.throughput.proxyEventsPerSecond)}; rounds ${spread(loopback.throughput.ratioPerRound)}`,
          n(loopback.throughput.ratio, 2),
          "–",
          "–",
        ],
        [
          `  reference: parse+re-encode proxy (events/s)`,
          n(loopback.throughput.reencodeEventsPerSecond),
          `raw SSE proxy; rounds ${spread(loopback.throughput.reencodeRatioPerRound)}`,
          n(loopback.throughput.reencodeRatio, 2),
          "–",
          "–",
        ],
        [
          "  end to end ÷ parse+re-encode proxy",
          n(loopback.throughput.serviceEventsPerSecond),
          `parse+re-encode proxy: ${n(loopback.throughput.reencodeEventsPerSecond)}; rounds ${spread(loopback.throughput.ratioToReencodePerRound)}`,
          n(loopback.throughput.ratioToReencode, 2),
          "≥ 0.9",
          check(loopback.throughput.ratioToReencode >= 0.9),
        ],
        [
          `added latency p50, ${loopback.latency.streams} streams (ms)`,
          n(loopback.latency.addedMs.p50, 2),
          `service ${n(loopback.latency.serviceMs.p50, 2)}, proxy ${n(loopback.latency.proxyMs.p50, 2)}; rounds ${spread(loopback.latency.rounds.map((round) => round.addedMs.p50))}`,
          n(loopback.latency.addedMs.p50, 2),
          "–",
          "–",
        ],
        [
          `added latency p99, ${loopback.latency.streams} streams (ms)`,
          n(loopback.latency.addedMs.p99, 2),
          `service ${n(loopback.latency.serviceMs.p99, 2)}, proxy ${n(loopback.latency.proxyMs.p99, 2)}; rounds ${spread(loopback.latency.rounds.map((round) => round.addedMs.p99))}`,
          n(loopback.latency.addedMs.p99, 2),
          "≤ 2",
          check(loopback.latency.addedMs.p99 <= 2),
        ],
      ] satisfies Row[])),
  ...(idle ?? []).flatMap((result): Row[] => [
    [
      `RSS per idle stream, ${n(result.streams)} streams (KiB)`,
      n(result.rssPerStreamKiB, 1),
      `heap ${n(result.heapPerStreamKiB, 1)} KiB`,
      n(result.rssPerStreamKiB, 1),
      "≤ 30 KB",
      check(result.rssPerStreamKiB * 1.024 <= 30),
    ],
    [
      `  reference: raw proxy, ${n(result.streams)} idle streams (KiB)`,
      n(result.proxyRssPerStreamKiB, 1),
      `heap ${n(result.proxyHeapPerStreamKiB, 1)} KiB`,
      `service ÷ proxy: ${n(result.rssPerStreamKiB / result.proxyRssPerStreamKiB, 1)}×`,
      "≤ 2×",
      check(result.rssPerStreamKiB / result.proxyRssPerStreamKiB <= 2),
    ],
    [
      `CPU while idle, ${n(result.streams)} streams (% of a core)`,
      n(result.idleCpuPercent, 1),
      `${n(result.heartbeatsPerSecond)} heartbeats/s (every ${result.heartbeatMs / 1000} s)`,
      n(result.idleCpuPercent, 1),
      "–",
      "–",
    ],
  ]),
  ...(store === undefined
    ? []
    : ([
        [
          `admission p50, ${n(store.large.files)} vs ${store.small.files} files (ms)`,
          n(store.large.p50Ms, 2),
          `${store.small.files} files: ${n(store.small.p50Ms, 2)}`,
          n(store.ratio, 2),
          "≤ 1.2",
          check(store.ratio <= 1.2),
        ],
        [
          "a new turn's admission and task-id writes, p50 (ms)",
          n(store.firstWrites.overlappedP50Ms, 2),
          `the second after the first: ${n(store.firstWrites.serialP50Ms, 2)}`,
          n(store.firstWrites.ratio, 2),
          "–",
          "–",
        ],
      ] satisfies Row[])),
  ...(slow === undefined
    ? []
    : ([
        [
          `slow client, ${n(slow.deltas)}-delta run: service peak RSS growth (MiB)`,
          n(slow.servicePeakRssMiB, 1),
          `${n(slow.streamMiB, 1)} MiB stream read at ${slow.burstKiB} KiB per ${slow.pauseMs} ms in ${n(slow.seconds, 1)} s${slow.complete ? "" : " (**incomplete**)"}; read at full speed: ${n(slow.serviceFastPeakRssMiB, 1)}; raw proxy: ${n(slow.proxyPeakRssMiB, 1)}`,
          `slow ÷ full speed: ${n(slow.servicePeakRssMiB / slow.serviceFastPeakRssMiB, 2)}`,
          "–",
          "–",
        ],
      ] satisfies Row[])),
  ...(dialect === undefined ? [] : dialectRows(dialect)),
  ...(redisStore === undefined ? [] : redisStoreRows(redisStore)),
  ...(instances === undefined ? [] : instancesRows(instances)),
  ...(memory === undefined ? [] : memoryRows(memory)),
  ...(peer === undefined ? [] : peerRows(peer)),
];

const table = [
  "| measure | value | reference | ratio | target | met |",
  "|---|---:|---|---:|---|---|",
  ...rows.map((row) => `| ${row.join(" | ")} |`),
].join("\n");
console.log(table);

const results = {
  at: new Date().toISOString(),
  machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, node: process.version, platform: `${os.platform()} ${os.release()}` },
  seconds: (Date.now() - started) / 1000,
  operatorChain: chain,
  loopback,
  idleStreams: idle,
  threadStore: store,
  slowClient: slow,
  a2aDialect: dialect,
  redisStore,
  instances,
  memory,
  peer,
  table,
};
if (everySection) {
  writeFileSync(RESULTS, `${JSON.stringify(results, null, 2)}\n`);
  log(`wrote ${RESULTS.pathname}`);
} else {
  log(`sections ${[...selected].join(", ")} only: ${RESULTS.pathname} left as it was`);
}
