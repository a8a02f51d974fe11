import { describe, expect, it } from "@jest/globals";
import { take } from "rxjs";
import { EventType } from "@ag-ui/core";
import type { RunItem, ToolStatus } from "../../lib/model/kernel-signal.js";
import { projectTools } from "../../operators/project-tools.js";
import { inChain, marbles, synchronousSource } from "../support/marbles.js";

const tool = (status: ToolStatus, extra: { input?: unknown; result?: unknown } = {}): RunItem => ({
  kind: "tool",
  status,
  toolCallId: "u1",
  toolName: "list_files",
  input: extra.input,
  result: extra.result,
});
const start = { type: EventType.TOOL_CALL_START, toolCallId: "u1", toolCallName: "list_files" };
const end = { type: EventType.TOOL_CALL_END, toolCallId: "u1" };
const result = (content: string, status: string) => ({
  type: EventType.TOOL_CALL_RESULT,
  messageId: "r1:tool-result:u1",
  toolCallId: "u1",
  content,
  role: "tool",
  metadata: { "iac-code": { status } },
});

describe("projectTools", () => {
  it("starts on started, sends key-sorted args and ends on input_complete, then one result", () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const signals = cold("a---b---c|", {
        a: tool("started"),
        b: tool("input_complete", { input: { z: 1, a: { y: [2], b: "é" } } }),
        c: tool("completed", { result: "3 files" }),
      });
      expectObservable(signals.pipe(projectTools({ runId: "r1" }))).toBe("s---(ge)r|", {
        s: start,
        g: { type: EventType.TOOL_CALL_ARGS, toolCallId: "u1", delta: '{"a":{"b":"é","y":[2]},"z":1}' },
        e: end,
        r: result("3 files", "completed"),
      });
      expectSubscriptions(signals.subscriptions).toBe("^--------!");
    });
  });

  it("opens a call told again once: a repeated input_complete or started, before or after its result, adds nothing", () => {
    marbles().run(({ cold, expectObservable }) => {
      const input = { input: { path: "." } };
      const signals = cold("a-b-c-d-e|", {
        a: tool("input_complete", input),
        b: tool("input_complete", input),
        c: tool("started"),
        d: tool("completed", { result: "ok" }),
        e: tool("input_complete", input),
      });
      expectObservable(signals.pipe(projectTools({ runId: "r1" }))).toBe("(sge)-r--|", {
        s: start,
        g: { type: EventType.TOOL_CALL_ARGS, toolCallId: "u1", delta: '{"path":"."}' },
        e: end,
        r: result("ok", "completed"),
      });
    });
  });

  it("parents the call to the text message open at its start", () => {
    marbles().run(({ cold, expectObservable }) => {
      const text = { type: EventType.TEXT_MESSAGE_START, messageId: "m1", role: "assistant" } as RunItem;
      expectObservable(cold("ta", { t: text, a: tool("started") }).pipe(projectTools({ runId: "r1" }))).toBe("ts", {
        t: text,
        s: { ...start, parentMessageId: "m1" },
      });
    });
  });

  it("parents the call to the message projectText placed it in (the assistant message of its turn) over the open text", () => {
    marbles().run(({ cold, expectObservable }) => {
      const text = { type: EventType.TEXT_MESSAGE_START, messageId: "m1", role: "assistant" } as RunItem;
      const placed = { ...tool("started"), parentMessageId: "r1:tool-calls:u1" } as RunItem;
      expectObservable(cold("ta", { t: text, a: placed }).pipe(projectTools({ runId: "r1" }))).toBe("ts", {
        t: text,
        s: { ...start, parentMessageId: "r1:tool-calls:u1" },
      });
    });
  });

  it("marks a failed tool so a generic client can tell it from a success, with JSON results as compact JSON", () => {
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(
        cold("a----b", { a: tool("input_complete", { input: {} }), b: tool("failed", { result: { error: "denied", code: 13.0 } }) }).pipe(
          projectTools({ runId: "r1" }),
        ),
      ).toBe("(sge)r", {
        s: start,
        g: { type: EventType.TOOL_CALL_ARGS, toolCallId: "u1", delta: "{}" },
        e: end,
        r: result('{"code":13,"error":"denied"}', "failed"),
      });
    });
  });

  it("ends a call still open before its result, and sends the result only once", () => {
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(
        cold("a---b---c", { a: tool("started"), b: tool("completed", { result: "ok" }), c: tool("completed", { result: "ok" }) }).pipe(
          projectTools({ runId: "r1" }),
        ),
      ).toBe("s---(er)", { s: start, e: end, r: result("ok", "completed") });
    });
  });

  it("turns progress into CUSTOM iac-code.tool-progress.v1 with the tool metadata", () => {
    const progress = { status: "progress", toolUseId: "u1", name: "deploy", mcp: { serverName: "ros", progress: 1, total: 3 } };
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("a", { a: { kind: "tool-progress", tool: progress } as RunItem }).pipe(projectTools({ runId: "r1" }))).toBe(
        "p",
        {
          p: { type: EventType.CUSTOM, name: "iac-code.tool-progress.v1", value: { schemaVersion: 1, ...progress } },
        },
      );
    });
  });
});

describe("projectTools and its subscription", () => {
  it("should not break unsubscription chain when unsubscribed explicitly", () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const signals = cold("a---b---c|", {
        a: tool("started"),
        b: tool("input_complete", { input: {} }),
        c: tool("completed", { result: "ok" }),
      });
      expectObservable(signals.pipe(inChain(projectTools({ runId: "r1" }))), "^-----!").toBe("s---(ge)", {
        s: start,
        g: { type: EventType.TOOL_CALL_ARGS, toolCallId: "u1", delta: "{}" },
        e: end,
      });
      expectSubscriptions(signals.subscriptions).toBe("^-----!");
    });
  });

  it("reads a synchronous source, and stops it when the subscriber leaves in the middle of a call", () => {
    const whole = synchronousSource([tool("started"), tool("completed", { result: "ok" })]);
    const seen: RunItem[] = [];
    whole.source.pipe(projectTools({ runId: "r1" })).subscribe((item) => seen.push(item));
    expect(seen).toEqual([start, end, result("ok", "completed")]);

    const { source, sent } = synchronousSource([tool("input_complete", { input: {} }), tool("completed", { result: "ok" })]);
    source.pipe(projectTools({ runId: "r1" }), take(2)).subscribe();
    expect(sent).toEqual([tool("input_complete", { input: {} })]);
  });
});
