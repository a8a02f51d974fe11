/**
 * Section: what the A2A 0.3 path costs beside the 1.0 path. One answer of a
 * stock agent (the 0.3 `slow-chat` fixture: a task, a status, twelve text
 * artifact chunks, the final status) is sent in both dialects, the 1.0
 * frames being what the client turns the 0.3 ones into, so the two sides
 * carry the same content:
 *
 * - in process: the wire text of each frame through JSON.parse, the
 *   JSON-RPC result, (for 0.3) the client's translation, the run's chain and
 *   the SSE encoding, by turns of 50 ms as the operator-chain section does;
 * - end to end: whole runs through the service on loopback, to the 0.3
 *   kernel (`@a2a-js/sdk` 0.3) and to the 1.0 replay kernel (`@a2a-js/sdk`
 *   1.x) replaying the translated frames, by turns of one run; this side
 *   also holds the two SDKs' own costs.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { from, lastValueFrom, map } from "rxjs";
import { streamResultFromV03 } from "../lib/a2a/dialect-v03.js";
import { resultOf, type JsonRpcResult } from "../lib/a2a/rpc-errors.js";
import { loadConfig, type Config } from "../lib/config.js";
import { encodeSseItem } from "../lib/http/sse-sink.js";
import { parseFixture, type FixtureLine } from "../lib/fixtures/fixture-format.js";
import { startReplayKernel } from "../lib/kernel/replay-kernel.js";
import { V03_FRAMES } from "../lib/kernel-v03/frames.js";
import { FIXTURES_V03_DIR, startReplayKernelV03 } from "../lib/kernel-v03/replay-kernel.js";
import { startService } from "../lib/server.js";
import { framesToSignals, projectionChain } from "../lib/testing/projection-chain.js";
import { alternate, median } from "./support.js";

const FIXTURE = "slow-chat";

function fixtureLines(): FixtureLine[] {
  const text = readFileSync(path.join(FIXTURES_V03_DIR, `${FIXTURE}.jsonl`), "utf8");
  return parseFixture(text, FIXTURE, V03_FRAMES)[0]!.lines.filter((line) => line.frame !== undefined);
}

/** The same frames as a 0.3 agent and as a 1.0 agent send them, as wire text with live ids. */
function wireFrames(): { v03: string[]; v10: string[] } {
  const live = (result: unknown) =>
    JSON.stringify({ jsonrpc: "2.0", id: "bench", result })
      .replaceAll("${taskId}", "bench-task")
      .replaceAll("${contextId}", "bench-context");
  const frames = fixtureLines().map((line) => line.frame as JsonRpcResult);
  return { v03: frames.map(live), v10: frames.map((frame) => live(streamResultFromV03(frame))) };
}

export interface DialectResult {
  fixture: string;
  framesPerRun: number;
  /** In process, frames/s. */
  chain: { v03FramesPerSecond: number; v10FramesPerSecond: number; ratio: number; ratioPerRound: number[] };
  /** Whole runs through the service, runs/s. */
  endToEnd: { v03RunsPerSecond: number; v10RunsPerSecond: number; ratio: number; runs: number };
}

export async function benchDialect({ rounds = 5, ms = 1000, runs = 60 } = {}): Promise<DialectResult> {
  const { v03, v10 } = wireFrames();
  let sink = 0;
  const through = (frames: string[], translate: boolean) => async () => {
    const items$ = from(frames).pipe(
      map((text) => (translate ? streamResultFromV03(resultOf(JSON.parse(text))) : resultOf(JSON.parse(text)))),
      framesToSignals(),
      projectionChain({ threadId: "bench-thread", runId: "bench-run" }),
      map((item) => encodeSseItem(item)),
    );
    await lastValueFrom(items$.pipe(map((text) => (sink += text.length))));
  };
  const oldPath = through(v10, false);
  const newPath = through(v03, true);
  await alternate(newPath, oldPath, { ms: 300 });
  const perRound: Array<[number, number, number, number]> = [];
  for (let round = 0; round < rounds; round++) perRound.push(await alternate(newPath, oldPath, { ms }));
  const rate = (calls: number, spentMs: number) => (calls * v03.length) / (spentMs / 1000);
  const v03Rates = perRound.map(([calls, , spent]) => rate(calls, spent));
  const v10Rates = perRound.map(([, calls, , spent]) => rate(calls, spent));
  if (sink < 0) console.log(sink);

  const endToEnd = await benchEndToEnd(runs);
  return {
    fixture: FIXTURE,
    framesPerRun: v03.length,
    chain: {
      v03FramesPerSecond: median(v03Rates),
      v10FramesPerSecond: median(v10Rates),
      ratio: median(v03Rates) / median(v10Rates),
      ratioPerRound: v03Rates.map((value, index) => value / v10Rates[index]!),
    },
    endToEnd,
  };
}

/**
 * The service as an operator configures it, in front of `a2aUrl`, with no drain on close. Through
 * loadConfig, as `service-child.ts` does, so new settings get their defaults here too; the environment is left out.
 */
const BENCH_CONFIG = (a2aUrl: string, stateDir: string, workspace: string): Config =>
  loadConfig(["--port", "0", "--a2a-url", a2aUrl, "--state-dir", stateDir, "--allowed-cwds", workspace, "--drain-s", "0"], {});

/** Whole runs of the fixture through a service in front of each kernel, by turns of one run each. */
async function benchEndToEnd(runs: number): Promise<DialectResult["endToEnd"]> {
  const { mkdtempSync, rmSync } = await import("node:fs");
  const os = await import("node:os");
  const lines = fixtureLines();
  const translated = lines.map((line) => ({ ...line, frame: streamResultFromV03(line.frame as JsonRpcResult) }));
  const stateDir = mkdtempSync(path.join(os.tmpdir(), "bench-dialect-"));
  const kernel03 = await startReplayKernelV03({ timeScale: 0 });
  const kernel10 = await startReplayKernel({ timeScale: 0, script: () => translated });
  const service03 = await startService(BENCH_CONFIG(kernel03.url, path.join(stateDir, "v03"), stateDir));
  const service10 = await startService(BENCH_CONFIG(kernel10.url, path.join(stateDir, "v10"), stateDir));
  let counter = 0;
  const run = async (url: string) => {
    const id = `bench-${++counter}`;
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify({
        threadId: `thread-${id}`,
        runId: `run-${id}`,
        state: {},
        messages: [{ id: `msg-${id}`, role: "user", content: FIXTURE }],
        tools: [],
        context: [],
        forwardedProps: { iacCode: { schemaVersion: 1, rosInvocationId: "ros-bench", cwd: stateDir } },
      }),
    });
    const text = await response.text();
    if (!text.includes('"RUN_FINISHED"')) throw new Error(`a bench run did not finish: ${text.slice(-300)}`);
  };
  try {
    for (let i = 0; i < 5; i++) await Promise.all([run(service03.url), run(service10.url)]);
    let spent03 = 0;
    let spent10 = 0;
    for (let i = 0; i < runs; i++) {
      let start = performance.now();
      await run(service03.url);
      spent03 += performance.now() - start;
      start = performance.now();
      await run(service10.url);
      spent10 += performance.now() - start;
    }
    const v03RunsPerSecond = runs / (spent03 / 1000);
    const v10RunsPerSecond = runs / (spent10 / 1000);
    return { v03RunsPerSecond, v10RunsPerSecond, ratio: v03RunsPerSecond / v10RunsPerSecond, runs };
  } finally {
    await service03.close();
    await service10.close();
    await kernel03.close();
    await kernel10.close();
    rmSync(stateDir, { recursive: true, force: true });
  }
}

const n = (value: number, digits = 0) => value.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** The section's rows of the bench table: measure, value, reference, ratio, target, met. */
export function dialectRows(result: DialectResult): Array<[string, string, string, string, string, string]> {
  const { chain, endToEnd } = result;
  const rounds = `${n(Math.min(...chain.ratioPerRound), 2)}–${n(Math.max(...chain.ratioPerRound), 2)}`;
  return [
    [
      `A2A 0.3 chain, \`${result.fixture}\` 0.3 fixture (frames/s)`,
      n(chain.v03FramesPerSecond),
      `the same frames as 1.0: ${n(chain.v10FramesPerSecond)}; rounds ${rounds}`,
      n(chain.ratio, 2),
      "–",
      "–",
    ],
    [
      `A2A 0.3 end to end, \`${result.fixture}\` runs through the service (runs/s)`,
      n(endToEnd.v03RunsPerSecond, 1),
      `1.0 replay kernel, same frames: ${n(endToEnd.v10RunsPerSecond, 1)}; ${endToEnd.runs} runs each`,
      n(endToEnd.ratio, 2),
      "–",
      "–",
    ],
  ];
}
