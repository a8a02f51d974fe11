/**
 * A reconnect's snapshot has a budget (issue 24, item 1): a long
 * conversation of large turns is read newest turn first and cut where the
 * budget ends, the stream says how many older turns it left out, and what
 * one snapshot held is given back when its stream ends. Through the real
 * service, against a kernel whose 30 tasks hold 1 MiB of text each.
 */
import os from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { EventType, type AGUIEvent, type Message } from "@ag-ui/core";
import { HistoryReads } from "../../lib/a2a/history-budget.js";
import { HISTORY_TRUNCATED_EVENT } from "../../lib/a2a/history-messages.js";
import { startService, type RunningService } from "../../lib/server.js";
import { expectValidRun } from "../support/agui.js";
import { startHostileKernel, type HostileKernel } from "../support/hostile-kernel.js";
import { postRun, runInput, testConfig } from "../support/service.js";

const MIB = 1024 * 1024;
const TASKS = 30;
const forwardedProps = { iacCode: { schemaVersion: 1, rosInvocationId: "ros-1", cwd: os.tmpdir() } };

const bigTask = (index: number, contextId: string) => ({
  id: `big-${index}`,
  contextId,
  status: { state: "TASK_STATE_COMPLETED", timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, index)).toISOString() },
  history: [
    { messageId: `question-${index}`, role: "ROLE_USER", parts: [{ text: `question ${index}` }] },
    { messageId: `answer-${index}`, role: "ROLE_AGENT", parts: [{ text: `${index}:`.padEnd(MIB, "x") }] },
  ],
});

function snapshotOf(events: readonly AGUIEvent[]): { notice: unknown; messages: Message[] } {
  const at = events.findIndex((event) => event.type === EventType.MESSAGES_SNAPSHOT);
  expect(at).toBeGreaterThan(0);
  const before = events[at - 1]!;
  const notice = before.type === EventType.CUSTOM && before.name === HISTORY_TRUNCATED_EVENT ? before.value : undefined;
  return { notice, messages: (events[at] as { messages: Message[] }).messages };
}

describe("a reconnect to a long conversation of large turns", () => {
  let kernel: HostileKernel;
  let service: RunningService;
  let connectUrl: string;

  beforeAll(async () => {
    kernel = await startHostileKernel();
    service = await startService(testConfig({ a2aUrl: kernel.url, historyBudgetBytes: 5 * MIB, historyProcessBudgetBytes: 6 * MIB }));
    // One turn makes the thread known; its context is the one the kernel lists.
    const first = runInput("hello", { forwardedProps });
    expect((await postRun(service.url, first)).status).toBe(200);
    const contextId = (kernel.calls("SendStreamingMessage")[0]!.params.message as { contextId: string }).contextId;
    const json = (res: import("node:http").ServerResponse, id: unknown, result: unknown) => {
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ jsonrpc: "2.0", id, result }));
    };
    const tasks = Array.from({ length: TASKS }, (_, index) => bigTask(index, contextId));
    kernel.answer("ListTasks", (request, res) =>
      json(res, request.id, { tasks: tasks.map(({ history: _history, ...task }) => task).reverse(), nextPageToken: "" }),
    );
    kernel.answer("GetTask", (request, res) => {
      const task = tasks.find(({ id }) => id === request.params.id);
      if (!task) return false;
      json(res, request.id, task);
    });
    connectUrl = `${service.url}/extensions/iac-code/v1/threads/${encodeURIComponent(first.threadId)}/connect`;
  });
  afterAll(async () => {
    await service.close();
    await kernel.close();
  });

  it("shows the newest turns that fit the budget, oldest of them first, and says how many older ones it left out", async () => {
    const connected = await postRun(connectUrl, {});
    expect(connected.status).toBe(200);
    await expectValidRun(connected.events);
    const { notice, messages } = snapshotOf(connected.events);
    // Four turns of a little over 1 MiB fit in 5 MiB; the 26 older ones do not.
    expect(notice).toEqual({ schemaVersion: 1, tasks: 26, reason: "request", budget: 5 * MIB });
    expect(messages.map(({ role, content }) => [role, typeof content === "string" ? content.slice(0, 12) : content])).toEqual(
      [26, 27, 28, 29].flatMap((index) => [
        ["user", `question ${index}`],
        ["assistant", `${index}:xxxxxxxxxx`.slice(0, 12)],
      ]),
    );
    expect(connected.events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });
  });

  it("gives its share back when its stream ends: the next reconnect fits the same turns", async () => {
    const first = snapshotOf((await postRun(connectUrl, {})).events);
    const again = snapshotOf((await postRun(connectUrl, {})).events);
    expect(again.notice).toEqual(first.notice);
    expect(again.messages.map(({ id }) => id)).toEqual(first.messages.map(({ id }) => id));
  });
});

describe("the process's limits on reading conversations", () => {
  it("charges no snapshot past what the process has left, and takes back what a finished one held", () => {
    const reads = new HistoryReads({ requestBytes: 100, processBytes: 150 });
    const one = reads.charge();
    const two = reads.charge();
    expect(one.take(100)).toBe(true);
    expect(one.take(1)).toBe("request");
    expect(two.take(60)).toBe("process");
    one.release();
    expect(reads.held).toBe(0);
    expect(two.take(60)).toBe(true);
    two.release();
    expect(two.take(1)).toBe("request");
  });

  it("has at most its limit of kernel reads in flight; the next starts when one ends", async () => {
    const reads = new HistoryReads({ requestBytes: 1, processBytes: 1, concurrentReads: 2 });
    const started: number[] = [];
    const finish: Array<() => void> = [];
    const all = [0, 1, 2, 3].map((index) =>
      reads.read(
        () =>
          new Promise<void>((resolve) => {
            started.push(index);
            finish[index] = resolve;
          }),
      ),
    );
    await Promise.resolve();
    expect(started).toEqual([0, 1]);
    finish[0]!();
    await all[0];
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual([0, 1, 2]);
    finish[1]!();
    await all[1];
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual([0, 1, 2, 3]);
    finish[2]!();
    finish[3]!();
    await Promise.all(all);
  });
});
