/**
 * Any instance serves any request of a thread (issue 14): three service
 * processes on one Redis and one kernel. A run pauses on one and is resumed
 * on another; twenty requests for one thread spread over the three give one
 * run and THREAD_BUSY for the rest; a run on one is cancelled through another.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { EventType, type AGUIEvent, type Interrupt } from "@ag-ui/core";
import { contextIdFor } from "../../lib/a2a/request-mapping.js";
import type { HoldLine } from "../../lib/kernel/replay-kernel.js";
import { expectValidRun } from "../support/agui.js";
import { openRun, parseSse } from "../support/service-process.js";
import { postRun, runInput, uniqueId } from "../support/service.js";
import { eventually, gate, startCluster, type Cluster } from "./cluster.js";

let cluster: Cluster;
/** The hold of the test that sets it; the kernel asks it for every line of every turn. */
let hold: HoldLine | undefined;

beforeAll(async () => {
  cluster = await startCluster({ instances: 3, kernel: { holdLine: (...line) => hold?.(...line) } });
}, 60_000);
afterAll(() => cluster.stop());

const url = (index: number) => cluster.instances[index]!.url;
const sessionOf = (events: readonly AGUIEvent[]) =>
  (
    events.find((event) => event.type === EventType.CUSTOM && event.name === "iac-code.session.v1") as {
      value: { executionId: string; taskId: string };
    }
  ).value;

describe("one thread, several instances", () => {
  it("resumes on B the run that paused on A", async () => {
    const first = runInput("question");
    const paused = await postRun(url(0), first);
    await expectValidRun(paused.events);
    const outcome = (paused.events.at(-1) as { outcome: { type: string; interrupts: Interrupt[] } }).outcome;
    expect(outcome.type).toBe("interrupt");

    const answer = { interruptId: outcome.interrupts[0]!.id, status: "resolved", payload: { selectedId: "cn-shanghai" } };
    const resumed = await postRun(url(1), { ...first, runId: uniqueId("run"), resume: [answer] });
    await expectValidRun(resumed.events);
    expect(resumed.events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });
    expect(JSON.stringify(cluster.kernel.received.at(-1)?.params)).toContain('"text":"Shanghai"');

    // The answer was applied once, wherever it was given: given again on C, it is refused.
    const replayed = await postRun(url(2), { ...first, runId: uniqueId("run"), resume: [answer] });
    await expectValidRun(replayed.events);
    expect(replayed.events.at(-1)).toMatchObject({ type: EventType.RUN_ERROR, code: "RESUME_ALREADY_APPLIED" });
    const stored = await cluster.store.load(first.threadId);
    expect(stored?.appliedResumeDigests).toHaveLength(1);
    expect(stored?.terminalExecutionIds).toContain(stored?.execution.executionId);
  });

  it("gives exactly one run to twenty concurrent requests for one thread over three instances, THREAD_BUSY to the rest", async () => {
    const threadId = uniqueId("thread");
    const held = gate();
    // The run that wins keeps going until every other request has its answer.
    hold = (turn, lineIndex) => (turn.contextId === contextIdFor(threadId) && lineIndex === 1 ? held.opened : undefined);
    try {
      let refused = 0;
      const requests = Array.from({ length: 20 }, (_, i) =>
        postRun(url(i % 3), runInput("chat", { threadId })).then((result) => {
          if (result.status !== 200) refused++;
          if (refused === 19) held.open();
          return result;
        }),
      );
      const results = await Promise.all(requests);
      const runs = results.filter((result) => result.status === 200);
      expect(runs).toHaveLength(1);
      await expectValidRun(runs[0]!.events);
      expect(runs[0]!.events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });
      const busy = results.filter((result) => result.status !== 200);
      expect(busy.map((result) => [result.status, (result.json as { error: { code: string } }).error.code])).toEqual(
        Array.from({ length: 19 }, () => [409, "THREAD_BUSY"]),
      );
      const sent = cluster.kernel.received.filter(
        (call) => call.method === "SendStreamingMessage" && JSON.stringify(call.params).includes(contextIdFor(threadId)),
      );
      expect(sent).toHaveLength(1);
    } finally {
      held.open();
      hold = undefined;
    }
  });

  it("cancels through B a run that lives on A: A's run ends CANCELLED and the execution is over for every instance", async () => {
    const input = runInput("chat");
    const held = gate();
    // The turn stops before its last line until the cancel is done: the run is live on A meanwhile.
    hold = (turn, lineIndex, lineCount) =>
      turn.contextId === contextIdFor(input.threadId) && lineIndex === lineCount - 1 ? held.opened : undefined;
    try {
      const open = await openRun(url(0), input, (raw) => raw.includes("iac-code.session.v1"));
      const { executionId, taskId } = sessionOf(await parseSse(open.raw));

      const response = await fetch(`${url(1)}/extensions/iac-code/v1/executions/${executionId}/cancel`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ threadId: input.threadId, rosInvocationId: "ros-1" }),
      });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ executionId, status: "cancelled" });
      expect(cluster.kernel.received.some((call) => call.method === "CancelTask" && (call.params as { id: string }).id === taskId)).toBe(
        true,
      );

      held.open();
      const events = await parseSse(await open.rest);
      await expectValidRun(events);
      expect(events.at(-1)).toMatchObject({ type: EventType.RUN_ERROR, code: "CANCELLED" });
      await eventually(async () => (await cluster.store.load(input.threadId))?.terminalExecutionIds.includes(executionId) ?? false);
      // Cancelled again, through C: it is over.
      const again = await fetch(`${url(2)}/extensions/iac-code/v1/executions/${executionId}/cancel`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ threadId: input.threadId, rosInvocationId: "ros-1" }),
      });
      expect(await again.json()).toEqual({ executionId, status: "already_terminal" });
    } finally {
      held.open();
      hold = undefined;
    }
  });
});
