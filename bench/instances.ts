/**
 * Section "instances": two service instances on one Redis against one, in
 * front of one kernel (`scripted-kernel.ts`), each in its own process, on
 * a real `redis-server` (as the tests start it, `lib/testing/redis-server.ts`).
 * Both instances run throughout; "one" sends every stream to the first,
 * "two" spreads them over both, in rounds that alternate.
 *
 *   throughput  `streams` streams at once, `events` deltas each, back to
 *               back: deltas received per second over the batch
 *   short runs  `runs` runs of `shortEvents` deltas, `concurrency` at a time:
 *               runs per second, which admission and the state writes
 *               (Redis) weigh on more than delivery does
 *
 * The ratio is the median over rounds of two ÷ one. On 2 cores the kernel
 * and this client share the cores with the instances, so it cannot reach 2.
 */
import os from "node:os";
import { startRedisServer } from "../lib/testing/redis-server.js";
import { openStream } from "./sse-client.js";
import { forkChild, median, wallClockMs } from "./support.js";

const here = new URL(".", import.meta.url).pathname;
let serial = 0;

/** A RunAgentInput whose user message is the scripted kernel's script. */
function runBody(script: object): string {
  const id = `${process.pid}-${++serial}`;
  return JSON.stringify({
    threadId: `bench-instances-thread-${id}`,
    runId: `bench-instances-run-${id}`,
    state: {},
    messages: [{ id: `bench-instances-msg-${id}`, role: "user", content: JSON.stringify(script) }],
    tools: [],
    context: [],
    forwardedProps: { iacCode: { schemaVersion: 1, rosInvocationId: "bench", cwd: os.tmpdir() } },
  });
}

export interface InstancesResult {
  rounds: number;
  throughput: {
    streams: number;
    eventsPerStream: number;
    oneEventsPerSecond: number;
    twoEventsPerSecond: number;
    ratio: number;
    ratioPerRound: number[];
  };
  shortRuns: {
    runs: number;
    concurrency: number;
    eventsPerRun: number;
    oneRunsPerSecond: number;
    twoRunsPerSecond: number;
    ratio: number;
    ratioPerRound: number[];
  };
}

export async function benchInstances({
  rounds = 5,
  streams = 20,
  events = 2_000,
  runs = 200,
  concurrency = 20,
  shortEvents = 5,
} = {}): Promise<InstancesResult> {
  const redis = await startRedisServer();
  const kernel = forkChild(`${here}scripted-kernel.js`, []);
  const { url: kernelUrl } = (await kernel.ready) as { url: string };
  const instances = [0, 1].map(() => forkChild(`${here}service-child.js`, [kernelUrl, "15000", "--redis-url", redis.url], ["--expose-gc"]));
  try {
    const urls = await Promise.all(instances.map(async (instance) => `${((await instance.ready) as { url: string }).url}/`));
    /** The url the i-th request of a batch goes to: always the first instance, or each in turn. */
    const target = (spread: 1 | 2, i: number) => urls[i % spread]!;

    const streamBatch = async (spread: 1 | 2, count: number, perStream: number) => {
      const start = wallClockMs();
      const outcomes = await Promise.all(
        Array.from({ length: count }, (_, i) => openStream(target(spread, i), runBody({ events: perStream }))),
      );
      const received = outcomes.reduce((sum, outcome) => sum + outcome.stamped, 0);
      if (received !== count * perStream) throw new Error(`${spread} instance(s): ${received} of ${count * perStream} deltas arrived`);
      return received / ((wallClockMs() - start) / 1000);
    };
    const shortBatch = async (spread: 1 | 2) => {
      let next = 0;
      const start = wallClockMs();
      const worker = async () => {
        while (next < runs) {
          const i = next++;
          const outcome = await openStream(target(spread, i), runBody({ events: shortEvents }));
          if (!outcome.last.includes("RUN_FINISHED")) throw new Error(`${spread} instance(s): a short run ended with ${outcome.last}`);
        }
      };
      await Promise.all(Array.from({ length: concurrency }, worker));
      return runs / ((wallClockMs() - start) / 1000);
    };

    // Warm-up: connections, JIT, the Redis scripts of both instances.
    for (const spread of [1, 2] as const) {
      await streamBatch(spread, streams, 200);
      await shortBatch(spread);
    }
    const rates = { one: [] as number[], two: [] as number[], oneShort: [] as number[], twoShort: [] as number[] };
    for (let round = 0; round < rounds; round++) {
      // Alternate which goes first, so neither always runs on a machine the other just warmed or loaded.
      const order: Array<1 | 2> = round % 2 === 0 ? [1, 2] : [2, 1];
      for (const spread of order) (spread === 1 ? rates.one : rates.two).push(await streamBatch(spread, streams, events));
      for (const spread of order) (spread === 1 ? rates.oneShort : rates.twoShort).push(await shortBatch(spread));
    }
    const paired = (two: number[], one: number[]) => two.map((rate, round) => rate / one[round]!);
    return {
      rounds,
      throughput: {
        streams,
        eventsPerStream: events,
        oneEventsPerSecond: median(rates.one),
        twoEventsPerSecond: median(rates.two),
        ratio: median(paired(rates.two, rates.one)),
        ratioPerRound: paired(rates.two, rates.one),
      },
      shortRuns: {
        runs,
        concurrency,
        eventsPerRun: shortEvents,
        oneRunsPerSecond: median(rates.oneShort),
        twoRunsPerSecond: median(rates.twoShort),
        ratio: median(paired(rates.twoShort, rates.oneShort)),
        ratioPerRound: paired(rates.twoShort, rates.oneShort),
      },
    };
  } finally {
    await Promise.all([...instances.map((instance) => instance.stop()), kernel.stop()]);
    await redis.stop();
  }
}

const n = (value: number, digits = 0) => value.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });
const spread = (values: readonly number[]) => `${n(Math.min(...values), 2)}–${n(Math.max(...values), 2)}`;

/** The section's rows of the bench table (see `run.ts`). */
export function instancesRows(result: InstancesResult): Array<[string, string, string, string, string, string]> {
  const { throughput, shortRuns } = result;
  return [
    [
      `two instances on Redis, ${throughput.streams} streams (events/s)`,
      n(throughput.twoEventsPerSecond),
      `one instance: ${n(throughput.oneEventsPerSecond)}; rounds ${spread(throughput.ratioPerRound)}`,
      n(throughput.ratio, 2),
      "–",
      "–",
    ],
    [
      `two instances on Redis, ${shortRuns.runs} runs of ${shortRuns.eventsPerRun} deltas, ${shortRuns.concurrency} at a time (runs/s)`,
      n(shortRuns.twoRunsPerSecond),
      `one instance: ${n(shortRuns.oneRunsPerSecond)}; rounds ${spread(shortRuns.ratioPerRound)}`,
      n(shortRuns.ratio, 2),
      "–",
      "–",
    ],
  ];
}
