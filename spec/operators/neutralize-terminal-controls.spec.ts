import { describe, expect, it } from "@jest/globals";
import { take } from "rxjs";
import { EventType, type AGUIEvent } from "@ag-ui/core";
import { neutralizeJsonText, neutralizeTerminalControls, neutralizeText } from "../../operators/neutralize-terminal-controls.js";
import { inChain, marbles, synchronousSource } from "../support/marbles.js";

describe("neutralizeText", () => {
  it.each([
    ["\x1b[31mred\x1b[0m", "red"],
    ["title\x1b]0;pwned\x07 after", "title after"],
    ["link \x1b]8;;https://x\x1b\\text\x1b]8;;\x1b\\", "link text"],
    ["bell\x07 and back\bspace", "bell\uFFFD and back\uFFFDspace"],
    ["C1 CSI \x9b2J cleared", "C1 CSI  cleared"],
    ["tabs\tand\nnewlines stay", "tabs\tand\nnewlines stay"],
    ["日本語 ok", "日本語 ok"],
    ["carriage\rreturn", "carriage\uFFFDreturn"],
  ])("neutralizes %j", (raw, expected) => {
    expect(neutralizeText(raw)).toBe(expected);
  });
});

describe("neutralizeTerminalControls", () => {
  it("cleans every text leaf of every event, deep in CUSTOM values and tool results too", () => {
    const dirty: AGUIEvent = { type: EventType.CUSTOM, name: "iac-code.pipeline.v1", value: { data: { lines: ["ok", "\x1b[2Jwiped"] } } };
    const result: AGUIEvent = {
      type: EventType.TOOL_CALL_RESULT,
      messageId: "m",
      toolCallId: "t",
      content: "\x1b[1mbold\x1b[22m",
      role: "tool",
    };
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const events = cold("ab|", { a: dirty, b: result });
      expectObservable(events.pipe(neutralizeTerminalControls())).toBe("ab|", {
        a: { ...dirty, value: { data: { lines: ["ok", "wiped"] } } },
        b: { ...result, content: "bold" },
      });
      expectSubscriptions(events.subscriptions).toBe("^-!");
    });
  });

  it("passes clean events through as the same objects, and the client's own ids unchanged", () => {
    const clean: AGUIEvent = { type: EventType.TEXT_MESSAGE_CONTENT, messageId: "m", delta: "plain" };
    const started: AGUIEvent = { type: EventType.RUN_STARTED, threadId: "t\x07", runId: "r" };
    const out: AGUIEvent[] = [];
    marbles().run(({ cold }) => {
      cold("ab", { a: clean, b: started })
        .pipe(neutralizeTerminalControls())
        .subscribe((event) => out.push(event));
    });
    expect(out[0]).toBe(clean);
    expect(out[1]).toBe(started);
  });

  it("cleans a text delta's id, its delta and its rawEvent alike", () => {
    const inId: AGUIEvent = { type: EventType.TEXT_MESSAGE_CONTENT, messageId: "m\x1b[2J", delta: "plain" };
    const inDelta: AGUIEvent = { type: EventType.TEXT_MESSAGE_CONTENT, messageId: "m", delta: "a\u202eb" };
    const inRaw: AGUIEvent = { type: EventType.TEXT_MESSAGE_CONTENT, messageId: "m", delta: "plain", rawEvent: { text: "\x07" } };
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("abc|", { a: inId, b: inDelta, c: inRaw }).pipe(neutralizeTerminalControls())).toBe("abc|", {
        a: { ...inId, messageId: "m" },
        b: { ...inDelta, delta: "a\uFFFDb" },
        c: { ...inRaw, rawEvent: { text: "\uFFFD" } },
      });
    });
  });
});

describe("neutralizeTerminalControls over a message's deltas", () => {
  it("tests each new id of a delta: one found clean before vouches for no other", () => {
    const clean: AGUIEvent = { type: EventType.TEXT_MESSAGE_CONTENT, messageId: "m", delta: "a" };
    const dirtyId: AGUIEvent = { type: EventType.TEXT_MESSAGE_CONTENT, messageId: "m\x1b[2J", delta: "b" };
    const dirtyDelta: AGUIEvent = { type: EventType.TEXT_MESSAGE_CONTENT, messageId: "m", delta: "c\x07" };
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("abacd|", { a: clean, b: dirtyId, c: dirtyDelta, d: clean }).pipe(neutralizeTerminalControls())).toBe(
        "abacd|",
        { a: clean, b: { ...dirtyId, messageId: "m" }, c: { ...dirtyDelta, delta: "c\uFFFD" }, d: clean },
      );
    });
  });
});

describe("bidirectional controls and tool arguments", () => {
  it.each([
    ["file\u202etxt.exe", "file\uFFFDtxt.exe"],
    ["isolate \u2066x\u2069", "isolate \uFFFDx\uFFFD"],
    ["marks stay: \u200f\u200e\u061c", "marks stay: \u200f\u200e\u061c"],
  ])("neutralizeText neutralizes the embeddings, overrides and isolates of %j", (raw, expected) => {
    expect(neutralizeText(raw)).toBe(expected);
  });

  it.each([
    [String.raw`{"c":"\u001b[2J"}`, String.raw`{"c":"\ufffd[2J"}`],
    [String.raw`{"c":"\u202Etxt"}`, String.raw`{"c":"\ufffdtxt"}`],
    [String.raw`{"c":"a\bb\rc\fd"}`, String.raw`{"c":"a\ufffdb\ufffdc\ufffdd"}`],
    [String.raw`{"c":"tab\t nl\n quote\" slash\\u001b"}`, String.raw`{"c":"tab\t nl\n quote\" slash\\u001b"}`],
    [String.raw`{"c":"\u00e9\u4e2d"}`, String.raw`{"c":"\u00e9\u4e2d"}`],
  ])("neutralizeJsonText makes %s parse to no control character", (json, expected) => {
    expect(neutralizeJsonText(json)).toBe(expected);
    expect(JSON.parse(neutralizeJsonText(json))).toEqual(JSON.parse(expected));
  });

  it("cleans the JSON escapes of TOOL_CALL_ARGS deltas, and leaves clean deltas as the same objects", () => {
    const dirty: AGUIEvent = { type: EventType.TOOL_CALL_ARGS, toolCallId: "t", delta: String.raw`{"command":"\u001b]0;x\u0007"}` };
    const clean: AGUIEvent = { type: EventType.TOOL_CALL_ARGS, toolCallId: "t", delta: String.raw`{"path":"C:\\dir"}` };
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("ab", { a: dirty, b: clean }).pipe(neutralizeTerminalControls())).toBe("ab", {
        a: { ...dirty, delta: String.raw`{"command":"\ufffd]0;x\ufffd"}` },
        b: clean,
      });
    });
  });
});

describe("neutralizeTerminalControls and its subscription", () => {
  const dirty: AGUIEvent = { type: EventType.TEXT_MESSAGE_CONTENT, messageId: "m", delta: "\x1b[31mred" };
  const clean: AGUIEvent = { type: EventType.TEXT_MESSAGE_CONTENT, messageId: "m", delta: "red" };

  it("should not break unsubscription chain when unsubscribed explicitly", () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const events = cold("a-b-c|", { a: dirty, b: clean, c: dirty });
      expectObservable(events.pipe(inChain(neutralizeTerminalControls())), "^--!").toBe("a-b", { a: clean, b: clean });
      expectSubscriptions(events.subscriptions).toBe("^--!");
    });
  });

  it("cleans a synchronous source, and stops it when the subscriber leaves", () => {
    const whole = synchronousSource([dirty, clean]);
    const seen: AGUIEvent[] = [];
    whole.source.pipe(neutralizeTerminalControls()).subscribe((event) => seen.push(event));
    expect(seen).toEqual([clean, clean]);

    const { source, sent } = synchronousSource([dirty, clean, dirty]);
    source.pipe(neutralizeTerminalControls(), take(1)).subscribe();
    expect(sent).toEqual([dirty]);
  });
});
