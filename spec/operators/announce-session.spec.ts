import { describe, expect, it } from "@jest/globals";
import { take } from "rxjs";
import { EventType } from "@ag-ui/core";
import type { RunItem } from "../../lib/model/kernel-signal.js";
import { announceSession } from "../../operators/announce-session.js";
import { inChain, marbles, synchronousSource } from "../support/marbles.js";

const identity = { threadId: "th", runId: "r1", executionId: "e1", contextId: "agui-c", rosInvocationId: "ros-1" };
const session = (taskId: string | null, sessionId: string | null) => ({
  type: EventType.CUSTOM,
  name: "iac-code.session.v1",
  value: {
    schemaVersion: 1,
    threadId: "th",
    aguiRunId: "r1",
    executionId: "e1",
    contextId: "agui-c",
    taskId,
    rosInvocationId: "ros-1",
    sessionId,
  },
});
const task: RunItem = { kind: "task-bound", taskId: "t1", contextId: "agui-c" };
const sess: RunItem = { kind: "session-bound", sessionId: "s1" };
const end: RunItem = { kind: "run-end", error: undefined, kernelSettled: true };

describe("announceSession", () => {
  it("announces as soon as both the task id and the session id are known, once", () => {
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("a-b---c-d", { a: task, b: sess, c: task, d: end }).pipe(announceSession(identity))).toBe("a-(bs)c-d", {
        a: task,
        b: sess,
        c: task,
        d: end,
        s: session("t1", "s1"),
      });
    });
  });

  it("does not announce ids still being written: only once they come again, stored", () => {
    const storingTask: RunItem = { ...task, storing: true } as RunItem;
    const storingSession: RunItem = { ...sess, storing: true } as RunItem;
    const text: RunItem = { kind: "text", messageId: "m1", text: "Hi", source: "delta" };
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(
        cold("abx-c-d---e", { a: storingTask, b: storingSession, x: text, c: task, d: sess, e: end }).pipe(announceSession(identity)),
      ).toBe("abx-c-(ds)e", { a: storingTask, b: storingSession, x: text, c: task, d: sess, e: end, s: session("t1", "s1") });
    });
  });

  it("announces a task stored after something was shown at once, unless its session is still being written", () => {
    const storingTask: RunItem = { ...task, storing: true } as RunItem;
    const storingSession: RunItem = { ...sess, storing: true } as RunItem;
    const shownText = { type: EventType.TEXT_MESSAGE_CONTENT, messageId: "m1", delta: "Hi" } as RunItem;
    marbles().run(({ cold, expectObservable }) => {
      // A plain agent names no session: its task is announced as soon as it is stored.
      expectObservable(cold("ax-c---e", { a: storingTask, x: shownText, c: task, e: end }).pipe(announceSession(identity))).toBe(
        "ax-(cs)e",
        { a: storingTask, x: shownText, c: task, e: end, s: session("t1", null) },
      );
      // The iac-code kernel's session is being written too: the announcement waits for it, and names it.
      expectObservable(
        cold("abx-c-d---e", { a: storingTask, b: storingSession, x: shownText, c: task, d: sess, e: end }).pipe(announceSession(identity)),
      ).toBe("abx-c-(ds)e", { a: storingTask, b: storingSession, x: shownText, c: task, d: sess, e: end, s: session("t1", "s1") });
    });
  });

  it("announces just before the run ends with nulls for what never came", () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const items = cold("a-(d|)", { a: task, d: end });
      expectObservable(items.pipe(announceSession(identity))).toBe("a-(sd|)", {
        a: task,
        d: end,
        s: session("t1", null),
      });
      expectSubscriptions(items.subscriptions).toBe("^-!");
    });
  });
});

describe("announceSession and its subscription", () => {
  it("should not break unsubscription chain when unsubscribed explicitly", () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const items = cold("a-b-c-d|", { a: task, b: sess, c: task, d: end });
      expectObservable(items.pipe(inChain(announceSession(identity))), "^--!").toBe("a-(bs)", { a: task, b: sess, s: session("t1", "s1") });
      expectSubscriptions(items.subscriptions).toBe("^--!");
    });
  });

  it("announces from a synchronous source, and stops it when the subscriber leaves between an item and its announcement", () => {
    const whole = synchronousSource([task, end]);
    const seen: unknown[] = [];
    whole.source.pipe(announceSession(identity)).subscribe((item) => seen.push(item));
    expect(seen).toEqual([task, session("t1", null), end]);

    const { source, sent } = synchronousSource([task, sess, task, end]);
    const taken: unknown[] = [];
    source.pipe(announceSession(identity), take(2)).subscribe((item) => taken.push(item));
    expect(taken).toEqual([task, sess]);
    expect(sent).toEqual([task, sess]);
  });
});
