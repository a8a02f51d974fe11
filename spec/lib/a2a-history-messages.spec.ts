import { describe, expect, it } from "@jest/globals";
import { conversationMessages, oldestFirst, readConversation, taskMessages } from "../../lib/a2a/history-messages.js";

const user = (messageId: string, text: string) => ({ messageId, role: "ROLE_USER", parts: [{ text }] });
const agent = (messageId: string, text: string) => ({ messageId, role: "ROLE_AGENT", parts: [{ text }] });
const task = (id: string, history: unknown[], timestamp?: string) => ({
  id,
  contextId: "ctx",
  status: { state: "TASK_STATE_COMPLETED", ...(timestamp ? { timestamp } : {}) },
  history,
});

describe("taskMessages", () => {
  it("gives the user's messages and the agent's text, in order, under the kernel's ids", () => {
    expect(taskMessages(task("t1", [user("m1", "deploy it"), agent("t1-message", "Deploying.")]))).toEqual([
      { id: "m1", role: "user", content: "deploy it" },
      { id: "t1-message", role: "assistant", content: "Deploying." },
    ]);
  });

  it("joins a streamed answer recorded chunk by chunk under one id, and takes a repeat of the whole text as the text", () => {
    const history = [user("m1", "hi"), agent("a", "Hel"), agent("a", "lo."), agent("a", "Hello."), agent("a", " Bye.")];
    expect(taskMessages(task("t1", history))).toEqual([
      { id: "m1", role: "user", content: "hi" },
      { id: "a", role: "assistant", content: "Hello. Bye." },
    ]);
  });

  it("leaves out the service's interrupt answers, parts without text, and entries that are no message", () => {
    const history = [
      user("m1", "deploy it"),
      agent("a", "May I?"),
      { messageId: "agui-resume-run-2-perm-1", role: "ROLE_USER", parts: [{ data: { decision: "allow_once" } }] },
      user("agui-resume-run-3", "Shanghai"),
      { messageId: "x", role: "ROLE_AGENT", parts: [{ data: {} }] },
      "not a message",
      agent("a", "Done."),
    ];
    expect(taskMessages(task("t1", history))).toEqual([
      { id: "m1", role: "user", content: "deploy it" },
      { id: "a", role: "assistant", content: "May I?" },
      // After the answer the agent's text is a message of its own, though the kernel reused the id.
      { id: "a", role: "assistant", content: "Done." },
    ]);
  });

  it("reads the agent's role as the projection does (`agent`, or none), and a task without history as no messages", () => {
    expect(
      taskMessages(
        task("t1", [
          { messageId: "a", parts: [{ text: "x" }] },
          { messageId: "b", role: "agent", parts: [{ text: "y" }] },
        ]),
      ),
    ).toEqual([
      { id: "a", role: "assistant", content: "x" },
      { id: "b", role: "assistant", content: "y" },
    ]);
    expect(taskMessages({ id: "t1" })).toEqual([]);
    expect(taskMessages(undefined)).toEqual([]);
  });
});

describe("conversationMessages", () => {
  it("keeps every message when one id names several: the last keeps it, earlier ones are numbered", () => {
    const tasks = [
      task("t1", [user("m1", "a"), agent("k", "one"), user("agui-resume-r", "ok"), agent("k", "two")]),
      task("t2", [user("m2", "b"), agent("k", "three")]),
    ];
    expect(conversationMessages(tasks).map(({ id, content }) => [id, content])).toEqual([
      ["m1", "a"],
      ["k:1", "one"],
      ["k:2", "two"],
      ["m2", "b"],
      ["k", "three"],
    ]);
  });
});

describe("the ids of agent messages", () => {
  it("are what the caller names them from their task and kernel id; the user's stay theirs", () => {
    const tasks = [task("t1", [user("m1", "a"), agent("k", "one")]), task("t2", [user("m2", "b"), agent("k", "two")])];
    const named = conversationMessages(tasks, (taskId, kernelId) => (taskId === "t2" ? `run-2:${kernelId}` : kernelId));
    expect(named.map(({ id }) => id)).toEqual(["m1", "k", "m2", "run-2:k"]);
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
  it("lists the context's tasks and reads each one's history, oldest first", async () => {
    const stored = {
      t1: task("t1", [user("m1", "first"), agent("t1-message", "One.")], "2026-01-01T00:00:01.000Z"),
      t2: task("t2", [user("m2", "second"), agent("t2-message", "Two.")], "2026-01-01T00:00:02.000Z"),
    };
    const calls: string[] = [];
    const a2a = {
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
    };
    expect(await readConversation(a2a, "ctx")).toEqual([
      { id: "m1", role: "user", content: "first" },
      { id: "t1-message", role: "assistant", content: "One." },
      { id: "m2", role: "user", content: "second" },
      { id: "t2-message", role: "assistant", content: "Two." },
    ]);
    expect(calls).toEqual(["ListTasks ctx 100", "GetTask t1 100", "GetTask t2 100"]);
  });

  it("fails when the kernel does", async () => {
    const a2a = {
      listTasks: async () => ({ tasks: [task("t1", [])] }),
      getTask: async () => Promise.reject(new Error("gone")),
    };
    await expect(readConversation(a2a, "ctx")).rejects.toThrow("gone");
  });
});
