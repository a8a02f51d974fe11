/**
 * Section 1: the operator chain alone, in process. A recorded fixture's
 * frames, as the JSON text a kernel sends, go through what the service does
 * with them between the socket and the socket: JSON.parse, the JSON-RPC
 * result, the run's own chain (`runPipeline` of `lib/run-pipeline.ts`, with
 * the in-memory ports of `lib/testing/projection-chain.ts`), and the SSE
 * encoding. The baseline only JSON-parses and JSON-stringifies the same
 * frames; the two run by turns of 50 ms. Also: the heartbeat operator's
 * cost per item, before and after.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { from, lastValueFrom, map, Subject, type Observable } from "rxjs";
import { resultOf } from "../lib/a2a/rpc-errors.js";
import { encodeSseItem } from "../lib/http/sse-sink.js";
import { parseFixture } from "../lib/fixtures/fixture-format.js";
import { FIXTURES_DIR } from "../lib/paths.js";
import { mergeHeartbeat } from "../operators/merge-heartbeat.js";
import { framesToSignals, projectionChain } from "../lib/testing/projection-chain.js";
import { rearmingHeartbeat } from "./baselines/rearm-heartbeat.js";
import { alternate, median } from "./support.js";

/** The recorded frames as wire text: `pipeline` when it exists, else `reasoning-tools`. */
export function fixtureFrames(): { name: string; frames: string[] } {
  const name = ["pipeline", "reasoning-tools"].find((candidate) => {
    try {
      readFileSync(path.join(FIXTURES_DIR, `${candidate}.jsonl`));
      return true;
    } catch {
      return false;
    }
  })!;
  const sections = parseFixture(readFileSync(path.join(FIXTURES_DIR, `${name}.jsonl`), "utf8"), name);
  const frames = sections[0]!.lines.flatMap((line) => (line.frame === undefined ? [] : [line.frame]));
  // The live ids a kernel puts in place of the fixture's placeholders.
  const wire = frames.map((result) =>
    JSON.stringify({ jsonrpc: "2.0", id: "bench", result })
      .replaceAll("${taskId}", "bench-task")
      .replaceAll("${contextId}", "bench-context"),
  );
  return { name, frames: wire };
}

/** `alternate`, as each one's rate of `units` per second. */
async function alternateRates(
  a: () => Promise<unknown> | unknown,
  b: () => Promise<unknown> | unknown,
  units: number,
  turns: { ms: number; sliceMs?: number },
): Promise<[number, number]> {
  const [callsA, callsB, msA, msB] = await alternate(a, b, turns);
  return [(callsA * units) / (msA / 1000), (callsB * units) / (msB / 1000)];
}

export interface OperatorChainResult {
  fixture: string;
  framesPerRun: number;
  aguiEventsPerRun: number;
  pipelineFramesPerSecond: number;
  baselineFramesPerSecond: number;
  ratio: number;
  heartbeat: { newItemsPerSecond: number; rearmingItemsPerSecond: number; ratio: number };
}

export async function benchOperatorChain({ rounds = 5, ms = 1500 } = {}): Promise<OperatorChainResult> {
  const { name, frames } = fixtureFrames();
  let sink = 0;
  const runOnce = async () => {
    const items$ = from(frames).pipe(
      map((text) => resultOf(JSON.parse(text))),
      framesToSignals(),
      projectionChain({ threadId: "bench-thread", runId: `bench-run` }),
      map((item) => encodeSseItem(item)),
    );
    let events = 0;
    await lastValueFrom(items$.pipe(map((text) => (events++, (sink += text.length)))));
    return events;
  };
  const baselineOnce = () => {
    for (const text of frames) sink += JSON.stringify(JSON.parse(text)).length;
  };
  const aguiEventsPerRun = await runOnce();
  // Warm up both, so the JIT has seen them before anything counts.
  await alternateRates(runOnce, baselineOnce, frames.length, { ms: 500 });
  const pipeline: number[] = [];
  const baseline: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const [chainRate, baselineRate] = await alternateRates(runOnce, baselineOnce, frames.length, { ms });
    pipeline.push(chainRate);
    baseline.push(baselineRate);
  }
  const heartbeat = await benchHeartbeat({ rounds, ms: ms / 2 });
  if (sink < 0) console.log(sink);
  const pipelineFramesPerSecond = median(pipeline);
  const baselineFramesPerSecond = median(baseline);
  return {
    fixture: name,
    framesPerRun: frames.length,
    aguiEventsPerRun,
    pipelineFramesPerSecond,
    baselineFramesPerSecond,
    ratio: pipelineFramesPerSecond / baselineFramesPerSecond,
    heartbeat,
  };
}

/** Items per second through the heartbeat operator alone: now, and as it re-armed a timer per item. */
async function benchHeartbeat({ rounds, ms }: { rounds: number; ms: number }) {
  const through = (operator: (source: Observable<number>) => Observable<unknown>) => async () => {
    const source = new Subject<number>();
    const subscription = operator(source).subscribe();
    for (let i = 0; i < 10_000; i++) source.next(i);
    subscription.unsubscribe();
  };
  const current = through(mergeHeartbeat<number>(15_000));
  const rearming = through(rearmingHeartbeat<number>(15_000));
  await alternateRates(current, rearming, 10_000, { ms: 300 });
  const now: number[] = [];
  const before: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const [currentRate, rearmingRate] = await alternateRates(current, rearming, 10_000, { ms });
    now.push(currentRate);
    before.push(rearmingRate);
  }
  return { newItemsPerSecond: median(now), rearmingItemsPerSecond: median(before), ratio: median(now) / median(before) };
}
