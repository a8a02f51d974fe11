/**
 * What observers watch and the disconnect grace window travel between
 * instances (issue 14): two service processes on one Redis and one kernel.
 * An observer on B watches a run on A from the run's live status; a client
 * of A that dropped comes back through B within its grace window; and a
 * window that runs out after B's client left too cancels the task once.
 *
 * What must not happen (a cancel while the client is back, a second one)
 * is checked once the instances' timers and sweeps that could do it have
 * run, as Redis's MONITOR feed shows (`watchScripts`), not after a pause.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { EventType, type AGUIEvent } from "@ag-ui/core";
import { createClient } from "redis";
import { contextIdFor } from "../../lib/a2a/request-mapping.js";
import type { HoldLine } from "../../lib/kernel/replay-kernel.js";
import type { ThreadStatus } from "../../lib/model/thread-status.js";
import { expectValidRun } from "../support/agui.js";
import { openRun, parseSse } from "../support/service-process.js";
import { runInput } from "../support/service.js";
import { eventually, gate, startCluster, watchScripts, type Cluster, type RanScript, type ScriptWatch } from "./cluster.js";

/** Short enough to see it run out, long enough for a client to come back through the other instance. */
const GRACE_MS = 2000;

let cluster: Cluster;
let redis: ReturnType<typeof createClient>;
let scripts: ScriptWatch;
/** The hold of the test that sets it; the kernel asks it for every line of every turn. */
let hold: HoldLine | undefined;

beforeAll(async () => {
  cluster = await startCluster({ instances: 0, kernel: { holdLine: (...line) => hold?.(...line) } });
  for (let i = 0; i < 2; i++) await cluster.startInstance({ IAC_CODE_AGUI_DISCONNECT_GRACE_MS: String(GRACE_MS) });
  redis = createClient({ url: cluster.redis.url });
  await redis.connect();
  scripts = await watchScripts(cluster.redis.url);
}, 60_000);
afterAll(async () => {
  await scripts.stop();
  await redis.close();
  await cluster.stop();
});

const [A, B] = [0, 1];
const url = (index: number) => cluster.instances[index]!.url;
const sessionOf = (events: readonly AGUIEvent[]) =>
  (events.find((event) => event.type === EventType.CUSTOM && event.name === "iac-code.session.v1") as { value: Record<string, string> })
    .value;
const snapshotOf = (events: readonly AGUIEvent[]) =>
  (events.find((event) => event.type === EventType.STATE_SNAPSHOT) as { snapshot: ThreadStatus } | undefined)?.snapshot;
const cancelsOf = (taskId: string) =>
  cluster.kernel.received.filter((call) => call.method === "CancelTask" && (call.params as { id: string }).id === taskId).length;
const heldInRedis = async (executionId: string) => (await redis.exists(`iac-code-agui:grace:${executionId}`)) === 1;
/** Redis's clock, which times every window. */
const redisNowMs = async () => Number(await redis.eval("local t = redis.call('TIME') return t[1] * 1000 + math.floor(t[2] / 1000)"));

// The grace window's scripts (lib/threads/disconnect-grace-redis.ts), by a line only each has: a timer's check of one wait, a sweep.
const isTimerCheck = (script: RanScript, executionId: string) =>
  script.command.includes("redis.call('ZSCORE', KEYS[1], ARGV[1])") && script.command.includes(executionId);
const isSweep = (script: RanScript) => script.command.includes("ZRANGEBYSCORE");
/** Resolves once a sweep of each instance has run after `afterMs` (Redis's clock). */
async function bothInstancesSwept(afterMs: number): Promise<void> {
  const first = await scripts.until("a sweep", (script) => isSweep(script) && script.atMs > afterMs);
  await scripts.until("the other instance's sweep", (script) => isSweep(script) && script.atMs > afterMs && script.client !== first.client);
}

/** A run on A whose turn stops before its last line until the test opens the gate: it is live meanwhile. */
async function liveRunOnA() {
  const input = runInput("chat");
  const held = gate();
  hold = (turn, lineIndex, lineCount) =>
    turn.contextId === contextIdFor(input.threadId) && lineIndex === lineCount - 1 ? held.opened : undefined;
  const run = await openRun(url(A), input, (raw) => raw.includes("iac-code.session.v1"));
  const { executionId, taskId } = sessionOf(await parseSse(run.raw));
  return { input, held, run, executionId: executionId!, taskId: taskId! };
}

/**
 * A's client drops the live run; once A holds its grace window in Redis, a
 * client connects to the thread through B. `windowEndsAt` is when the
 * window A started ends, by Redis's clock, as it was before B's claim.
 */
async function dropAndConnectOnB({ input, run, executionId }: Awaited<ReturnType<typeof liveRunOnA>>) {
  run.abort();
  await eventually(() => heldInRedis(executionId));
  const windowEndsAt = Number(await redis.zScore("iac-code-agui:grace-due", executionId));
  const attached = await openRun(`${url(B)}/extensions/iac-code/v1/threads/${encodeURIComponent(input.threadId)}/connect`, {}, (raw) =>
    raw.includes("STATE_SNAPSHOT"),
  );
  return { attached, windowEndsAt };
}

/** Every instance sees the execution as over once the thread's stored state lists it as ended. */
const executionEnded = (threadId: string, executionId: string) =>
  eventually(async () => (await cluster.store.load(threadId))?.terminalExecutionIds.includes(executionId) ?? false);

describe("observing across instances", () => {
  it("an observer on B watches a run on A: it starts from the run's live status and ends with the run", async () => {
    const { input, held, run, executionId } = await liveRunOnA();
    try {
      const observer = await openRun(
        `${url(B)}/extensions/iac-code/v1/executions/${executionId}/subscribe`,
        { threadId: input.threadId },
        (raw) => raw.includes("STATE_SNAPSHOT"),
      );
      // B never saw this run: only the shared status tells it the run is on, and whose it is.
      expect(snapshotOf(await parseSse(observer.raw))).toMatchObject({ threadId: input.threadId, runActive: true, runId: input.runId });

      held.open();
      const ran = await parseSse(await run.rest);
      const observed = await parseSse(await observer.rest);
      await expectValidRun(ran);
      await expectValidRun(observed);
      expect(ran.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });
      expect(observed.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });
      const lastStatus = observed.filter((event) => event.type === EventType.STATE_DELTA).at(-1) as { delta: unknown[] };
      expect(lastStatus.delta).toContainEqual({ op: "replace", path: "/runActive", value: false });
    } finally {
      held.open();
      hold = undefined;
    }
  });

  it("a client of A that dropped re-attaches through B within the window: its task runs on, and its execution ends with it", async () => {
    const live = await liveRunOnA();
    const { input, held, executionId, taskId } = live;
    try {
      const { attached, windowEndsAt } = await dropAndConnectOnB(live);
      // The window A started is over, A's timer for it has looked, and each instance has swept since:
      // nobody took the wait B watches, nor cancelled.
      await scripts.until("A's timer", (script) => isTimerCheck(script, executionId));
      await bothInstancesSwept(windowEndsAt);
      expect(await heldInRedis(executionId)).toBe(true);
      expect(cancelsOf(taskId)).toBe(0);

      held.open();
      const events = await parseSse(await attached.rest);
      await expectValidRun(events);
      expect(events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });
      // B saw the task settle: the window is given up for good and the execution ended, for every instance.
      await executionEnded(input.threadId, executionId);
      expect(await heldInRedis(executionId)).toBe(false);
      expect(cancelsOf(taskId)).toBe(0);
    } finally {
      held.open();
      hold = undefined;
    }
  });

  it("a window that runs out after B's returning client left too cancels the task once, and the execution is over", async () => {
    const live = await liveRunOnA();
    const { input, held, executionId, taskId } = live;
    try {
      const { attached } = await dropAndConnectOnB(live);
      attached.abort();

      await eventually(() => cancelsOf(taskId) > 0);
      await executionEnded(input.threadId, executionId);
      // Taken, so nothing is left for anyone to take again; and both instances, which time and sweep the window, have swept since.
      expect(await heldInRedis(executionId)).toBe(false);
      await bothInstancesSwept(await redisNowMs());
      expect(cancelsOf(taskId)).toBe(1);
    } finally {
      held.open();
      hold = undefined;
    }
  });
});
