import { describe, expect, it } from "@jest/globals";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { StreamResponse } from "@a2a-js/sdk";
import {
  DEFAULT_FIXTURE,
  FixtureFormatError,
  frameKey,
  listFixtures,
  loadFixture,
  parseFixture,
  selectFixture,
} from "../../../lib/kernel/fixtures.js";
import { fillPlaceholders, toLiveEvent } from "../../../lib/kernel/live-event.js";
import { FIXTURES_DIR } from "../../../lib/paths.js";

const DEMO_FIXTURES = ["chat", "reasoning-tools", "failing-run", "whole-text", "stream-error", "slow-chat"];

describe("the recorded fixtures", () => {
  it("include every demo scenario", async () => {
    expect(await listFixtures(FIXTURES_DIR)).toEqual(expect.arrayContaining(DEMO_FIXTURES));
  });

  it("parse, and every frame is a StreamResponse the SDK reads under its own key", async () => {
    for (const name of await listFixtures(FIXTURES_DIR)) {
      const lines = await loadFixture(FIXTURES_DIR, name);
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines.filter((l) => l.frame !== undefined)) {
        const key = frameKey(line.frame);
        expect(key).toBeDefined();
        expect(StreamResponse.fromJSON(line.frame).payload?.$case).toBe(key);
        expect(() => toLiveEvent(line.frame, { taskId: "t", contextId: "c" })).not.toThrow();
      }
    }
  });

  it("end in the state their scenario promises", async () => {
    const lastState = async (name: string) => {
      const frames = (await loadFixture(FIXTURES_DIR, name)).filter((l) => l.frame);
      return (frames.at(-1)!.frame as any).statusUpdate?.status?.state;
    };
    expect(await lastState("chat")).toBe("TASK_STATE_COMPLETED");
    expect(await lastState("failing-run")).toBe("TASK_STATE_FAILED");
    expect((await loadFixture(FIXTURES_DIR, "stream-error")).at(-1)!.error).toBeDefined();
  });

  it("keep float-written metadata numbers as floats in the file", async () => {
    const text = await readFile(path.join(FIXTURES_DIR, "chat.jsonl"), "utf8");
    expect(text).toMatch(/"inputTokens": \d+\.0/);
  });
});

describe("parseFixture", () => {
  it("skips blank and # comment lines and defaults delayMs to 0", () => {
    const text = '# a comment\n\n{"frame": {"message": {"messageId": "m"}}}\n  # indented comment\n';
    expect(parseFixture(text)).toEqual([{ delayMs: 0, frame: { message: { messageId: "m" } } }]);
  });

  it("reads an error line with optional data", () => {
    const text = '{"delayMs": 5, "error": {"code": -32000, "message": "boom", "data": {"retryable": true}}}';
    expect(parseFixture(text)).toEqual([{ delayMs: 5, error: { code: -32000, message: "boom", data: { retryable: true } } }]);
  });

  it.each([
    ["not JSON", "{nope", /x.jsonl:1: not JSON/],
    ["a frame with an unknown key", '{"frame": {"kind": "status-update"}}', /exactly one of task/],
    ["a frame with two keys", '{"frame": {"task": {}, "message": {}}}', /exactly one of task/],
    ["both frame and error", '{"frame": {"task": {}}, "error": {"code": 1, "message": "m"}}', /exactly one of "frame" or "error"/],
    ["a negative delay", '{"delayMs": -1, "frame": {"task": {}}}', /delayMs/],
    ["an error without an integer code", '{"error": {"code": "E", "message": "m"}}', /"error" must be/],
    ["an unknown key", '{"delay": 3, "frame": {"task": {}}}', /unknown key\(s\) delay/],
    ["a line after an error", '{"error": {"code": 1, "message": "m"}}\n{"frame": {"task": {}}}', /x.jsonl:2: nothing may follow/],
  ])("rejects %s, naming the file and line", (_label, text, message) => {
    expect(() => parseFixture(text, "x.jsonl")).toThrow(FixtureFormatError);
    expect(() => parseFixture(text, "x.jsonl")).toThrow(message);
  });
});

describe("selectFixture", () => {
  const available = ["chat", "reasoning-tools"];

  it.each(["reasoning-tools", "  reasoning-tools\n", "fixture:reasoning-tools", "/reasoning-tools"])(
    "picks the fixture named by %j",
    (text) => expect(selectFixture(text, available)).toBe("reasoning-tools"),
  );

  it.each(["", "hello there", "unknown-name", "/../../etc/passwd", "reasoning-tools please"])(
    "falls back to the default for %j",
    (text) => expect(selectFixture(text, available)).toBe(DEFAULT_FIXTURE),
  );
});

describe("fillPlaceholders", () => {
  it("replaces the live ids inside every string, at any depth", () => {
    const filled = fillPlaceholders(
      { messageId: "${taskId}-message", nested: [{ s: "${contextId}/${taskId}" }], n: 6497.0, b: true, z: null },
      { taskId: "T", contextId: "C" },
    );
    expect(filled).toEqual({ messageId: "T-message", nested: [{ s: "C/T" }], n: 6497, b: true, z: null });
  });
});
