/**
 * Redis stopped and started again under load, two instances on it: while
 * it is down, requests that need thread state are answered 503
 * STATE_UNAVAILABLE at once (no hang) and /ready says so; a run in flight
 * whose next write cannot be made ends with RUN_ERROR
 * STATE_PERSISTENCE_FAILED; once Redis is back (with what it persisted),
 * every thread loads, none is corrupted, and each one takes a new turn.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { EventType, type AGUIEvent } from "@ag-ui/core";
import { contextIdFor } from "../../lib/a2a/request-mapping.js";
import type { HoldLine } from "../../lib/kernel/replay-kernel.js";
import { expectValidRun } from "../support/agui.js";
import { openRun, parseSse } from "../support/service-process.js";
import { postRun, runInput, uniqueId, type RunResult } from "../support/service.js";
import { eventually, gate, startCluster, type Cluster } from "./cluster.js";

const LEASE_TTL_MS = 1500;
/** What "at once" means for a request while Redis is down: well under the client's command timeout. */
const FAST_MS = 1000;

let cluster: Cluster;
let hold: HoldLine | undefined;

beforeAll(async () => {
  cluster = await startCluster({ instances: 2, leaseTtlMs: LEASE_TTL_MS, kernel: { holdLine: (...line) => hold?.(...line) } });
}, 60_000);
afterAll(() => cluster.stop());

const codeOf = (result: RunResult) =>
  result.events.length > 0
    ? ((result.events.at(-1) as { code?: string }).code ?? "finished")
    : (result.json as { error?: { code: string } } | undefined)?.error?.code;

/** What a request may end with, Redis up or down: never a hang, never anything else. */
const ACCEPTABLE = new Set(["finished", "STATE_UNAVAILABLE", "STATE_PERSISTENCE_FAILED", "THREAD_BUSY"]);

describe("Redis stopped and started under load", () => {
  it("answers 503 fast while it is down, fails the run that must write, and corrupts no thread", async () => {
    const urls = cluster.instances.map((instance) => instance.url);
    const threads = Array.from({ length: 6 }, () => uniqueId("thread"));
    const outcomes: Array<{ code: string | undefined; startedAt: number; ms: number }> = [];
    let loading = true;
    // Each worker runs turns on its own threads, on one instance and then the other, until told to stop.
    const worker = async (index: number) => {
      for (let turn = 0; loading; turn++) {
        const started = Date.now();
        const result = await postRun(urls[turn % urls.length]!, runInput("chat", { threadId: threads[index]! }));
        if (result.events.length > 0) await expectValidRun(result.events);
        outcomes.push({ code: codeOf(result), startedAt: started, ms: Date.now() - started });
        // Paced, so that fast refusals do not turn the load into a busy loop on a shared machine.
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };

    // One run is held between its task and its session lines: the session mapping is a write it must make.
    const inFlight = runInput("chat");
    const held = gate();
    let reachedHold!: () => void;
    const atHold = new Promise<void>((resolve) => (reachedHold = resolve));
    hold = (turn, lineIndex) => {
      if (turn.contextId !== contextIdFor(inFlight.threadId) || lineIndex !== 1) return undefined;
      reachedHold();
      return held.opened;
    };
    const open = await openRun(urls[0]!, inFlight, (raw) => raw.includes("RUN_STARTED"));
    await atHold;
    // The task is known and stored once the kernel's first line is through; only then is Redis stopped.
    await eventually(async () => (await cluster.store.load(inFlight.threadId))?.execution.taskId != null);

    const workers = threads.map((_, index) => worker(index));
    await eventually(() => outcomes.filter((outcome) => outcome.code === "finished").length >= threads.length);

    await cluster.redis.halt();
    // Requests that straddle the halt wait for Redis's own shutdown; from here on Redis is down.
    const downFrom = Date.now();
    let downUntil = Number.POSITIVE_INFINITY;
    try {
      held.open();
      const failed = await parseSse(await open.rest);
      await expectValidRun(failed);
      expect(failed.at(-1)).toMatchObject({ type: EventType.RUN_ERROR, code: "STATE_PERSISTENCE_FAILED" });

      for (const url of urls) {
        const started = Date.now();
        const refused = await postRun(url, runInput("chat"));
        expect(Date.now() - started).toBeLessThan(FAST_MS);
        expect([refused.status, codeOf(refused)]).toEqual([503, "STATE_UNAVAILABLE"]);
        await eventually(async () => {
          const ready = await fetch(`${url}/ready`);
          return ready.status === 503 && ((await ready.json()) as { stateDir: string }).stateDir === "failed";
        });
      }
      // The load goes on against the outage for a while: every answer comes fast, and says what failed.
      await eventually(() => outcomes.filter(({ startedAt, code }) => startedAt >= downFrom && code === "STATE_UNAVAILABLE").length >= 20);
    } finally {
      downUntil = Date.now();
      await cluster.redis.restart();
    }

    for (const url of urls) await eventually(async () => (await fetch(`${url}/ready`)).status === 200);
    const restartedAt = outcomes.length;
    await eventually(() => outcomes.slice(restartedAt).filter((outcome) => outcome.code === "finished").length >= threads.length * 2);
    loading = false;
    await Promise.all(workers);
    hold = undefined;

    for (const { code } of outcomes) expect(ACCEPTABLE).toContain(code);
    const whileDown = outcomes.filter(({ startedAt }) => startedAt >= downFrom && startedAt < downUntil);
    expect(whileDown.length).toBeGreaterThanOrEqual(20);
    for (const { ms, code } of whileDown) {
      // One that started just before the restart may have been served by a Redis already back.
      expect(["STATE_UNAVAILABLE", "finished"]).toContain(code);
      if (code === "STATE_UNAVAILABLE") expect(ms).toBeLessThan(FAST_MS);
    }
    // No thread is corrupted: each loads, and each takes a new turn, on either instance (once a lease the outage kept has expired).
    for (const threadId of [...threads, inFlight.threadId]) {
      const stored = await cluster.store.load(threadId);
      expect(stored?.threadId).toBe(threadId);
      for (const url of urls) {
        let result: RunResult | undefined;
        await eventually(async () => {
          result = await postRun(url, runInput("chat", { threadId }));
          return codeOf(result) !== "THREAD_BUSY";
        });
        await expectValidRun(result!.events);
        expect((result!.events as AGUIEvent[]).at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });
      }
    }
  }, 90_000);
});
