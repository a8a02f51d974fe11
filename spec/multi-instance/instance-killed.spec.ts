/**
 * An instance that dies mid-run (SIGKILL: no cleanup) leaves its lease in
 * Redis, which expires after the lease TTL (IAC_CODE_AGUI_LEASE_TTL_MS,
 * short here). Until then the thread is busy on every instance; once it has
 * expired, the next request on another instance is served, and cancels the
 * task the dead instance left running before it sends anything new.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { EventType } from "@ag-ui/core";
import { contextIdFor } from "../../lib/a2a/request-mapping.js";
import type { HoldLine } from "../../lib/kernel/replay-kernel.js";
import { expectValidRun } from "../support/agui.js";
import { openRun, parseSse } from "../support/service-process.js";
import { postRun, runInput, uniqueId } from "../support/service.js";
import { eventually, gate, startCluster, type Cluster } from "./cluster.js";

const LEASE_TTL_MS = 3000;

let cluster: Cluster;
let hold: HoldLine | undefined;

beforeAll(async () => {
  cluster = await startCluster({ instances: 2, leaseTtlMs: LEASE_TTL_MS, kernel: { holdLine: (...line) => hold?.(...line) } });
}, 60_000);
afterAll(() => cluster.stop());

describe("an instance killed mid-run", () => {
  it("blocks its thread until its lease expires; then another instance serves it and cancels the orphaned task first", async () => {
    const [a, b] = cluster.instances;
    const first = runInput("chat");
    const held = gate();
    // The run on A never finishes by itself: it is live when A dies. The next turn (a new task) plays on.
    let heldTask: string | undefined;
    hold = (turn, lineIndex, lineCount) => {
      if (turn.contextId !== contextIdFor(first.threadId)) return undefined;
      heldTask ??= turn.taskId;
      return turn.taskId === heldTask && lineIndex === lineCount - 1 ? held.opened : undefined;
    };
    try {
      // The session event comes once the task id is stored.
      const open = await openRun(a!.url, first, (raw) => raw.includes("iac-code.session.v1"));
      const session = (await parseSse(open.raw)).find((event) => event.type === EventType.CUSTOM && event.name === "iac-code.session.v1");
      const { taskId } = (session as { value: { taskId: string } }).value;
      a!.child.kill("SIGKILL");
      await a!.exited;
      const killedAt = Date.now();
      open.abort();

      const next = () => ({ ...runInput("chat"), threadId: first.threadId, runId: uniqueId("run") });
      const early = await postRun(b!.url, next());
      expect([early.status, (early.json as { error: { code: string } }).error.code]).toEqual([409, "THREAD_BUSY"]);

      await eventually(async () => (await cluster.client.exists(cluster.store.leaseKey(first.threadId))) === 0);
      // The renewal every third of the TTL means the lease outlives its last renewal by at most the TTL.
      expect(Date.now() - killedAt).toBeLessThanOrEqual(LEASE_TTL_MS + 1000);

      const served = await postRun(b!.url, next());
      await expectValidRun(served.events);
      expect(served.events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });
      const calls = cluster.kernel.received;
      const cancelled = calls.findIndex((call) => call.method === "CancelTask" && (call.params as { id: string }).id === taskId);
      const sentAfter = calls
        .map((call) => call.method === "SendStreamingMessage" && JSON.stringify(call.params).includes(contextIdFor(first.threadId)))
        .lastIndexOf(true);
      expect(cancelled).toBeGreaterThanOrEqual(0);
      expect(cancelled).toBeLessThan(sentAfter);
      const stored = await cluster.store.load(first.threadId);
      expect(stored?.terminalExecutionIds).toContain(stored?.execution.executionId);
    } finally {
      held.open();
      hold = undefined;
    }
  });
});
