/**
 * What observers watch and the disconnect grace window travel between
 * instances (issue 14): two service processes on one Redis and one kernel.
 * An observer on B watches a run on A from the run's live status; a client
 * of A that dropped comes back through B within its grace window; and a
 * window that runs out after B's client left too cancels the task once.
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
import { eventually, gate, startCluster, type Cluster } from "./cluster.js";

/** Short enough to see it run out, long enough for a client to come back through the other instance. */
const GRACE_MS = 2000;

let cluster: Cluster;
let redis: ReturnType<typeof createClient>;
/** The hold of the test that sets it; the kernel asks it for every line of every turn. */
let hold: HoldLine | undefined;

beforeAll(async () => {
  cluster = await startCluster({ instances: 0, kernel: { holdLine: (...line) => hold?.(...line) } });
  for (let i = 0; i < 2; i++) await cluster.startInstance({ IAC_CODE_AGUI_DISCONNECT_GRACE_MS: String(GRACE_MS) });
  redis = createClient({ url: cluster.redis.url });
  await redis.connect();
}, 60_000);
afterAll(async () => {
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

/** A's client drops the live run; once A holds its grace window in Redis, a client connects to the thread through B. */
async function dropAndConnectOnB({ input, run, executionId }: Awaited<ReturnType<typeof liveRunOnA>>) {
  run.abort();
  await eventually(() => heldInRedis(executionId));
  return openRun(`${url(B)}/extensions/iac-code/v1/threads/${encodeURIComponent(input.threadId)}/connect`, {}, (raw) =>
    raw.includes("STATE_SNAPSHOT"),
  );
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
      const attached = await dropAndConnectOnB(live);
      // Watched from B for longer than the window: nobody cancels while the client is back.
      await new Promise((resolve) => setTimeout(resolve, GRACE_MS + 500));
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
      const attached = await dropAndConnectOnB(live);
      attached.abort();

      await eventually(() => cancelsOf(taskId) > 0);
      await executionEnded(input.threadId, executionId);
      // Both instances time and sweep the window: still one cancel a window later.
      await new Promise((resolve) => setTimeout(resolve, GRACE_MS + 500));
      expect(cancelsOf(taskId)).toBe(1);
      expect(await heldInRedis(executionId)).toBe(false);
    } finally {
      held.open();
      hold = undefined;
    }
  });
});
