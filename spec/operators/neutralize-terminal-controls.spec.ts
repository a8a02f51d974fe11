import { describe, expect, it } from "@jest/globals";
import { EventType, type AGUIEvent } from "@ag-ui/core";
import { neutralizeTerminalControls, neutralizeText } from "../../operators/neutralize-terminal-controls.js";
import { marbles } from "../support/marbles.js";

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
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("ab", { a: dirty, b: result }).pipe(neutralizeTerminalControls())).toBe("ab", {
        a: { ...dirty, value: { data: { lines: ["ok", "wiped"] } } },
        b: { ...result, content: "bold" },
      });
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
});
