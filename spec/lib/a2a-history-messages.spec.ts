import { describe, expect, it } from "@jest/globals";
import { EventType } from "@ag-ui/core";
import { HistoryReads } from "../../lib/a2a/history-budget.js";
import {
  conversationEvents,
  conversationOf,
  HISTORY_TRUNCATED_EVENT,
  historyTask,
  oldestFirst,
  readConversation,
  type HistoryNaming,
} from "../../lib/a2a/history-messages.js";

const user = (messageId: string, text: string) => ({ messageId, role: "ROLE_USER", parts: [{ text }] });
const agent = (messageId: string, text: string) => ({ messageId, role: "ROLE_AGENT", parts: [{ text }] });
const status = (messageId: string, iacCode: Record<string, unknown>) => ({
  messageId,
  role: "ROLE_AGENT",
  parts: [],
  metadata: { iac_code: iacCode },
});
const task = (id: string, history: unknown[], timestamp?: string) => ({
  id,
  contextId: "ctx",
  status: { state: "TASK_STATE_COMPLETED", ...(timestamp ? { timestamp } : {}) },
  history,
});

const runsOf = (runs: Record<string, string>) =>
  new Map(Object.entries(runs).map(([opening, runId]) => [opening, { runId, answeredCalls: [] as string[] }]));

/** Tasks → the conversation, named after the runs that opened them. */
const conversation = (tasks: unknown[], runs: Record<string, string> = {}, runOfTask?: HistoryNaming["runOfTask"]) =>
  conversationOf(
    tasks.map((raw) => historyTask(raw)!.task),
    { runs: runsOf(runs), ...(runOfTask ? { runOfTask } : {}) },
  );

describe("a task's history as messages", () => {
  it("names each run's messages as its live stream did: `<runId>:<kernel message>`; the user's keep their ids", () => {
    const tasks = [task("t1", [user("m1", "deploy it"), agent("t1-message", "Deploying.")])];
    expect(conversation(tasks, { m1: "run-1" })).toEqual([
      { id: "m1", role: "user", content: "deploy it" },
      { id: "run-1:t1-message", role: "assistant", content: "Deploying." },
    ]);
  });

  it("joins a streamed answer recorded chunk by chunk under one id, and takes a repeat of the whole text as the text", () => {
    const history = [user("m1", "hi"), agent("a", "Hel"), agent("a", "lo."), agent("a", "Hello."), agent("a", " Bye.")];
    expect(conversation([task("t1", history)], { m1: "r" })).toEqual([
      { id: "m1", role: "user", content: "hi" },
      { id: "r:a", role: "assistant", content: "Hello. Bye." },
    ]);
  });

  it("shows recorded tool calls in their turn's message, each result right below it, thinking beside its text, and the text after a result apart", () => {
    const history = [
      user("m1", "check it"),
      status("s1", { thinking: { type: "raw_thinking", text: "Let me look." } }),
      agent("k", "Checking."),
      status("s2", { tool: { status: "started", toolUseId: "call-1", name: "Validate" } }),
      status("s3", { tool: { status: "input_complete", toolUseId: "call-1", name: "Validate", toolInput: { b: 2, a: 1 } } }),
      status("s4", { tool: { status: "completed", toolUseId: "call-1", name: "Validate", result: { valid: true } } }),
      agent("k", "It is valid."),
    ];
    expect(conversation([task("t1", history)], { m1: "run-1" })).toEqual([
      { id: "m1", role: "user", content: "check it" },
      { id: "reasoning-run-1:agent", role: "reasoning", content: "Let me look." },
      {
        id: "run-1:k",
        role: "assistant",
        content: "Checking.",
        toolCalls: [{ id: "call-1", type: "function", function: { name: "Validate", arguments: '{"a":1,"b":2}' } }],
      },
      {
        id: "run-1:tool-result:call-1",
        toolCallId: "call-1",
        role: "tool",
        content: '{"valid":true}',
        metadata: { "iac-code": { status: "completed" } },
      },
      { id: "run-1:k:after:call-1", role: "assistant", content: "It is valid." },
    ]);
  });

  it("names what follows a resume after the resuming run, and leaves the service's answers out", () => {
    const history = [
      user("m1", "deploy it"),
      agent("a", "May I?"),
      status("s1", { tool: { status: "started", toolUseId: "call-1", name: "Deploy" } }),
      { messageId: "agui-resume-run-2-perm-1", role: "ROLE_USER", parts: [{ data: { decision: "allow_once" } }] },
      status("s2", { tool: { status: "completed", toolUseId: "call-1", name: "Deploy", result: "done" } }),
      agent("a", "Done."),
    ];
    const runs = { m1: "run-1", "agui-resume-run-2-perm-1": "run-2" };
    expect(conversation([task("t1", history)], runs)).toEqual([
      { id: "m1", role: "user", content: "deploy it" },
      {
        id: "run-1:a",
        role: "assistant",
        content: "May I?",
        toolCalls: [{ id: "call-1", type: "function", function: { name: "Deploy", arguments: "" } }],
      },
      {
        id: "run-2:tool-result:call-1",
        toolCallId: "call-1",
        role: "tool",
        content: "done",
        metadata: { "iac-code": { status: "completed" } },
      },
      { id: "run-2:a:after:call-1", role: "assistant", content: "Done." },
    ]);
  });

  it("names the turns no kept run opened after their task and place, so one kernel id never names two messages", () => {
    const tasks = [
      task("t1", [user("m1", "a"), agent("k", "one"), user("m2", "b"), agent("k", "two")]),
      task("t2", [user("m3", "c"), agent("k", "three")]),
    ];
    expect(conversation(tasks).map(({ id }) => id)).toEqual(["m1", "t1:0:k", "m2", "t1:1:k", "m3", "t2:0:k"]);
    // The watched task's first turn is its current run's, marked or not.
    expect(conversation(tasks, {}, (taskId) => (taskId === "t2" ? "run-9" : undefined)).map(({ id }) => id)).toContain("run-9:k");
  });

  it("reads the agent's role as the projection does (`agent`, or none), and skips what is no message", () => {
    const history = [
      user("m1", "x"),
      { messageId: "a", parts: [{ text: "x" }] },
      "not a message",
      { messageId: "b", role: "agent", parts: [{ text: "y" }] },
    ];
    expect(conversation([task("t1", history)], { m1: "r" })).toEqual([
      { id: "m1", role: "user", content: "x" },
      { id: "r:a", role: "assistant", content: "x" },
      { id: "r:b", role: "assistant", content: "y" },
    ]);
    expect(historyTask({ id: "t1" })).toEqual({ task: { id: "t1", entries: [] }, size: 2 });
    expect(historyTask(undefined)).toBeUndefined();
  });
});

describe("oldestFirst", () => {
  it("orders by status time when every task has one, else reverses the kernel's newest-first listing", () => {
    const [a, b, c] = [
      task("a", [], "2026-01-01T00:00:03.000Z"),
      task("b", [], "2026-01-01T00:00:01.000Z"),
      task("c", [], "2026-01-01T00:00:02.000Z"),
    ];
    expect(oldestFirst([a, b, c]).map((t) => (t as { id: string }).id)).toEqual(["b", "c", "a"]);
    expect(oldestFirst([a, task("b", []), c]).map((t) => (t as { id: string }).id)).toEqual(["c", "b", "a"]);
  });
});

describe("readConversation", () => {
  const stored = {
    t1: task("t1", [user("m1", "first"), agent("t1-message", "One.".repeat(100))], "2026-01-01T00:00:01.000Z"),
    t2: task("t2", [user("m2", "second"), agent("t2-message", "Two.")], "2026-01-01T00:00:02.000Z"),
  };
  const kernel = (calls: string[] = []) => ({
    listTasks: async (contextId: string, pageSize?: number) => {
      calls.push(`ListTasks ${contextId} ${pageSize}`);
      return {
        tasks: [
          { ...stored.t2, history: [] },
          { ...stored.t1, history: [] },
        ],
      };
    },
    getTask: async (id: string, historyLength?: number) => {
      calls.push(`GetTask ${id} ${historyLength}`);
      return stored[id as keyof typeof stored];
    },
  });
  const naming = { runs: runsOf({ m1: "run-1", m2: "run-2" }) };

  it("lists the context's tasks, reads each one's history newest first, and shows them oldest first", async () => {
    const calls: string[] = [];
    expect(await readConversation(kernel(calls), "ctx", { naming })).toEqual({
      messages: [
        { id: "m1", role: "user", content: "first" },
        { id: "run-1:t1-message", role: "assistant", content: "One.".repeat(100) },
        { id: "m2", role: "user", content: "second" },
        { id: "run-2:t2-message", role: "assistant", content: "Two." },
      ],
    });
    expect(calls).toEqual(["ListTasks ctx 100", "GetTask t2 100", "GetTask t1 100"]);
  });

  it("stops at the snapshot's budget, newest turns first, says how many older ones it left out, and gives the budget back", async () => {
    const reads = new HistoryReads({ requestBytes: 100, processBytes: 1_000 });
    const charge = reads.charge();
    const read = await readConversation(kernel(), "ctx", { naming, reads, charge });
    expect(read).toEqual({
      messages: [
        { id: "m2", role: "user", content: "second" },
        { id: "run-2:t2-message", role: "assistant", content: "Two." },
      ],
      leftOut: { tasks: 1, reason: "request", budget: 100 },
    });
    expect(reads.held).toBeGreaterThan(0);
    charge.release();
    expect(reads.held).toBe(0);
    expect(conversationEvents(read)).toEqual([
      { type: EventType.CUSTOM, name: HISTORY_TRUNCATED_EVENT, value: { schemaVersion: 1, tasks: 1, reason: "request", budget: 100 } },
      { type: EventType.MESSAGES_SNAPSHOT, messages: read.messages },
    ]);
  });

  it("stops where the process has nothing left, though the snapshot's own budget would fit", async () => {
    const reads = new HistoryReads({ requestBytes: 10_000, processBytes: 500 });
    const other = reads.charge();
    expect(other.take(450)).toBe(true);
    const read = await readConversation(kernel(), "ctx", { naming, reads, charge: reads.charge() });
    expect(read.leftOut).toEqual({ tasks: 1, reason: "process", budget: 10_000 });
    other.release();
  });

  it("fails when the kernel does", async () => {
    const a2a = {
      listTasks: async () => ({ tasks: [task("t1", [])] }),
      getTask: async () => Promise.reject(new Error("gone")),
    };
    await expect(readConversation(a2a, "ctx")).rejects.toThrow("gone");
  });
});
