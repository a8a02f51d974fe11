import { describe, expect, it } from "@jest/globals";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { StreamResponse } from "@a2a-js/sdk";
import { FixtureFormatError, frameKey, parseFixture, sectionFor, type FixtureSection } from "../../../lib/fixtures/fixture-format.js";
import { fillPlaceholders } from "../../../lib/fixtures/placeholders.js";
import { DEFAULT_FIXTURE, listFixtures, loadFixture, selectFixture } from "../../../lib/kernel/fixtures.js";
import { toLiveEvent } from "../../../lib/kernel/live-event.js";
import { FIXTURES_DIR } from "../../../lib/paths.js";
import type { WireStreamResponse } from "./a2a-wire.js";

const DEMO_FIXTURES = [
  "chat",
  "reasoning-tools",
  "failing-run",
  "whole-text",
  "stream-error",
  "slow-chat",
  "permission",
  "question",
  "deploy-confirm",
  "pipeline",
  "pipeline-permission",
  "pipeline-failed-step",
  "pipeline-cleanup",
  "pipeline-drop",
  "pipeline-sideband",
];

const linesOf = (sections: FixtureSection[]) => sections.flatMap((s) => s.lines);
// Fixture frames are wire JSON, read as such: a frame of another shape fails the assertion that reads it.
const lastFrame = (section: FixtureSection) => section.lines.filter((l) => l.frame).at(-1)!.frame as WireStreamResponse;
const stateOfFrame = (frame: WireStreamResponse) => frame.statusUpdate?.status?.state;

describe("the recorded fixtures", () => {
  it("include every demo scenario", async () => {
    expect(await listFixtures(FIXTURES_DIR)).toEqual(expect.arrayContaining(DEMO_FIXTURES));
  });

  it("parse, and every frame of every turn is a StreamResponse the SDK reads under its own key", async () => {
    for (const name of await listFixtures(FIXTURES_DIR)) {
      const sections = await loadFixture(FIXTURES_DIR, name);
      expect(sections.length).toBeGreaterThan(0);
      for (const section of sections) expect(section.lines.length).toBeGreaterThan(0);
      for (const line of linesOf(sections).filter((l) => l.frame !== undefined)) {
        const key = frameKey(line.frame);
        expect(key).toBeDefined();
        expect(StreamResponse.fromJSON(line.frame).payload?.$case).toBe(key);
        expect(() => toLiveEvent(line.frame, { taskId: "t", contextId: "c" })).not.toThrow();
      }
    }
  });

  it("end in the state their scenario promises", async () => {
    const lastState = async (name: string) => stateOfFrame(lastFrame((await loadFixture(FIXTURES_DIR, name))[0]!));
    expect(await lastState("chat")).toBe("TASK_STATE_COMPLETED");
    expect(await lastState("failing-run")).toBe("TASK_STATE_FAILED");
    expect(linesOf(await loadFixture(FIXTURES_DIR, "stream-error")).at(-1)!.error).toBeDefined();
    expect(await lastState("pipeline")).toBe("TASK_STATE_COMPLETED");
    expect(await lastState("pipeline-failed-step")).toBe("TASK_STATE_FAILED");
    expect(await lastState("pipeline-cleanup")).toBe("TASK_STATE_COMPLETED");
    expect(await lastState("pipeline-drop")).toBe("TASK_STATE_COMPLETED");
    expect(await lastState("pipeline-permission")).toBe("TASK_STATE_INPUT_REQUIRED");
    expect(await lastState("pipeline-sideband")).toBe("TASK_STATE_WORKING");
  });

  it("pipeline-drop drops its stream mid-pipeline, then pauses long enough to re-attach", async () => {
    const [section] = await loadFixture(FIXTURES_DIR, "pipeline-drop");
    const at = section!.lines.findIndex((l) => l.drop);
    expect(section!.lines.filter((l) => l.drop)).toHaveLength(1);
    expect(at).toBeGreaterThan(1);
    expect(at).toBeLessThan(section!.lines.length - 2);
    expect(section!.lines[at + 1]!.delayMs).toBeGreaterThanOrEqual(200);
  });

  it.each([
    ["permission", "permission", ['"decision":"allow_once"', '"decision":"deny"']],
    ["question", "ask_user_question", ["Hangzhou", "Shanghai", undefined]],
    ["deploy-confirm", "deployment_confirmation", ['"action": "confirm"', '"action": "adjust"', '"action": "cancel"', undefined]],
  ])("%s parks turn 0 on a %s projection and completes every turn-1 answer", async (name, kind, whens) => {
    const sections = await loadFixture(FIXTURES_DIR, name);
    expect(sections.map((s) => [s.turn, s.when])).toEqual([[0, undefined], ...whens.map((when) => [1, when])]);
    const parked = lastFrame(sections[0]!);
    expect(stateOfFrame(parked)).toBe("TASK_STATE_INPUT_REQUIRED");
    const input = parked.statusUpdate!.metadata!.iac_code!.input!;
    expect(input).toMatchObject({
      schemaVersion: 1,
      kind,
      requestTaskId: "${taskId}",
      contextId: "${contextId}",
      inputId: expect.stringContaining("${taskId}"),
      toolUseId: expect.stringMatching(/^toolu_/),
      toolName: expect.any(String),
      title: expect.any(String),
      prompt: expect.any(String),
      safeSummary: expect.any(String),
      required: true,
      language: "en",
    });
    // Only the projection fields the adapter keeps (wire contract §5).
    const kept = [
      "schemaVersion",
      "kind",
      "requestTaskId",
      "contextId",
      "inputId",
      "toolUseId",
      "toolName",
      "title",
      "purpose",
      "effect",
      "target",
      "isReadOnly",
      "prompt",
      "safeSummary",
      "options",
      "language",
      "deploymentSummary",
      "scope",
      "subPipelineId",
      "operation",
      "displayParameters",
      "allowFreeText",
      "freeTextPrompt",
      "required",
      "selector",
    ];
    expect(Object.keys(input).filter((key) => !kept.includes(key))).toEqual([]);
    for (const section of sections.slice(1)) expect(stateOfFrame(lastFrame(section))).toBe("TASK_STATE_COMPLETED");
  });

  it("permission asks about a mutating ros_deploy_stack call that turn 0 started", async () => {
    const [turn0] = await loadFixture(FIXTURES_DIR, "permission");
    const frames = turn0!.lines.map((l) => l.frame as WireStreamResponse);
    expect(frames.some((f) => f.statusUpdate?.metadata?.iac_code?.tool?.status === "started")).toBe(true);
    expect(frames.at(-1)!.statusUpdate!.metadata!.iac_code!.input).toMatchObject({
      inputId: "perm-${taskId}",
      toolUseId: "toolu_deploy_1",
      toolName: "ros_deploy_stack",
      effect: expect.any(String),
      target: expect.any(String),
      isReadOnly: false,
    });
  });

  it("question and deploy-confirm offer the contract's options", async () => {
    const inputOf = async (name: string) => lastFrame((await loadFixture(FIXTURES_DIR, name))[0]!).statusUpdate!.metadata!.iac_code!.input;
    expect(await inputOf("question")).toMatchObject({
      prompt: "Which region should I deploy to?",
      options: [
        { id: "cn-hangzhou", label: "Hangzhou" },
        { id: "cn-shanghai", label: "Shanghai" },
      ],
      allowFreeText: true,
    });
    expect(await inputOf("deploy-confirm")).toMatchObject({
      options: [
        { id: "confirm", label: "Deploy now", action: "confirm" },
        { id: "adjust", label: "Adjust parameters", action: "adjust" },
        { id: "cancel", label: "Cancel", action: "cancel" },
      ],
      deploymentSummary: expect.objectContaining({ stackName: "demo-vpc-ecs" }),
    });
  });

  it("chat lists every demo scenario", async () => {
    const text = await readFile(path.join(FIXTURES_DIR, "chat.jsonl"), "utf8");
    for (const name of DEMO_FIXTURES) expect(text).toContain(`- \`${name}\`:`);
  });

  it("keep float-written metadata numbers as floats in the file", async () => {
    const text = await readFile(path.join(FIXTURES_DIR, "chat.jsonl"), "utf8");
    expect(text).toMatch(/"inputTokens": \d+\.0/);
  });
});

describe("parseFixture", () => {
  it("skips blank and # comment lines and defaults delayMs to 0", () => {
    const text = '# a comment\n\n{"frame": {"message": {"messageId": "m"}}}\n  # indented comment\n';
    expect(parseFixture(text)).toEqual([{ turn: 0, lines: [{ delayMs: 0, frame: { message: { messageId: "m" } } }] }]);
  });

  it("reads a drop line, with its delay", () => {
    expect(parseFixture('{"delayMs": 200, "drop": true}\n{"frame": {"message": {"messageId": "m"}}}')).toEqual([
      {
        turn: 0,
        lines: [
          { delayMs: 200, drop: true },
          { delayMs: 0, frame: { message: { messageId: "m" } } },
        ],
      },
    ]);
  });

  it("reads an error line with optional data", () => {
    const text = '{"delayMs": 5, "error": {"code": -32000, "message": "boom", "data": {"retryable": true}}}';
    expect(parseFixture(text)).toEqual([
      { turn: 0, lines: [{ delayMs: 5, error: { code: -32000, message: "boom", data: { retryable: true } } }] },
    ]);
  });

  it.each([
    ["not JSON", "{nope", /x.jsonl:1: not JSON/],
    ["a frame with an unknown key", '{"frame": {"kind": "status-update"}}', /exactly one of task/],
    ["a frame with two keys", '{"frame": {"task": {}, "message": {}}}', /exactly one of task/],
    ["both frame and error", '{"frame": {"task": {}}, "error": {"code": 1, "message": "m"}}', /exactly one of "frame", "error" or "drop"/],
    ["a drop with a frame", '{"drop": true, "frame": {"task": {}}}', /exactly one of "frame", "error" or "drop"/],
    ["a drop that is not true", '{"delayMs": 5, "drop": false}', /"drop" must be true/],
    ["a line with nothing to do", '{"delayMs": 5}', /exactly one of "frame", "error" or "drop"/],
    ["a negative delay", '{"delayMs": -1, "frame": {"task": {}}}', /delayMs/],
    ["an error without an integer code", '{"error": {"code": "E", "message": "m"}}', /"error" must be/],
    ["an unknown key", '{"delay": 3, "frame": {"task": {}}}', /unknown key\(s\) delay/],
    ["a line after an error", '{"error": {"code": 1, "message": "m"}}\n{"frame": {"task": {}}}', /x.jsonl:2: nothing may follow/],
    ["a negative turn", '{"turn": -1}\n{"frame": {"task": {}}}', /x.jsonl:1: "turn" must be an integer/],
    ["a fractional turn", '{"turn": 1.5}\n{"frame": {"task": {}}}', /"turn" must be an integer/],
    ["an empty when", '{"turn": 1, "when": ""}\n{"frame": {"task": {}}}', /"when" must be a non-empty string/],
    ["a marker with other keys", '{"turn": 1, "delayMs": 3}', /a turn marker is/],
    [
      "an empty section",
      '{"frame": {"task": {}}}\n{"turn": 1}\n{"turn": 2}\n{"frame": {"task": {}}}',
      /x.jsonl:2: a turn section needs at least one line/,
    ],
    ["an empty last section", '{"frame": {"task": {}}}\n{"turn": 1}', /x.jsonl:2: a turn section needs at least one line/],
    [
      "turns out of order",
      '{"turn": 2}\n{"frame": {"task": {}}}\n{"turn": 1}\n{"frame": {"task": {}}}',
      /x.jsonl:3: turn 1 comes after turn 2/,
    ],
    [
      "two fallbacks for a turn",
      '{"frame": {"task": {}}}\n{"turn": 0}\n{"frame": {"task": {}}}',
      /x.jsonl:2: turn 0 already has a section without "when"/,
    ],
    [
      "a repeated when",
      '{"turn": 1, "when": "a"}\n{"frame": {"task": {}}}\n{"turn": 1, "when": "a"}\n{"frame": {"task": {}}}',
      /already has a section for "when"/,
    ],
  ])("rejects %s, naming the file and line", (_label, text, message) => {
    expect(() => parseFixture(text, "x.jsonl")).toThrow(FixtureFormatError);
    expect(() => parseFixture(text, "x.jsonl")).toThrow(message);
  });
});

describe("turn sections", () => {
  const frame = (id: string) => `{"frame": {"message": {"messageId": "${id}"}}}`;
  const text = [
    frame("zero-a"),
    frame("zero-b"),
    '{"turn": 1, "when": "\\"decision\\":\\"deny\\""}',
    frame("deny"),
    '{"turn": 1}',
    frame("fallback"),
    '{"turn": 1, "when": "allow"}',
    frame("allow"),
    '{"delayMs": 5, "error": {"code": -32000, "message": "stop"}}',
    "# an error ends only its own section",
    '{"turn": 3}',
    frame("three"),
  ].join("\n");
  const ids = (section: FixtureSection | undefined) =>
    section?.lines.map((l) => (l.frame as WireStreamResponse | undefined)?.message!.messageId ?? "error");

  it("split the file: lines before any marker are turn 0", () => {
    expect(parseFixture(text).map((s) => [s.turn, s.when, s.lines.length])).toEqual([
      [0, undefined, 2],
      [1, '"decision":"deny"', 1],
      [1, undefined, 1],
      [1, "allow", 2],
      [3, undefined, 1],
    ]);
  });

  it("are chosen by turn index, then by the first `when` found in the answer, else the fallback", () => {
    const sections = parseFixture(text);
    expect(ids(sectionFor(sections, 0, "anything"))).toEqual(["zero-a", "zero-b"]);
    expect(ids(sectionFor(sections, 1, '{"kind":"permission","decision":"deny"}'))).toEqual(["deny"]);
    expect(ids(sectionFor(sections, 1, "I allow it"))).toEqual(["allow", "error"]);
    // Both occur: the first section in the file wins.
    expect(ids(sectionFor(sections, 1, 'allow? no: "decision":"deny"'))).toEqual(["deny"]);
    expect(ids(sectionFor(sections, 1, "something else"))).toEqual(["fallback"]);
    expect(sectionFor(sections, 2, "")).toBeUndefined();
    expect(ids(sectionFor(sections, 3, ""))).toEqual(["three"]);
  });

  it("leave a turn without a fallback unplayed when no `when` matches", () => {
    const sections = parseFixture('{"turn": 1, "when": "yes"}\n' + frame("yes"));
    expect(sectionFor(sections, 1, "no")).toBeUndefined();
    expect(sectionFor(sections, 0, "yes")).toBeUndefined();
  });

  it("can start with an explicit turn 0 marker", () => {
    expect(parseFixture('{"turn": 0}\n' + frame("a")).map((s) => s.turn)).toEqual([0]);
  });
});

describe("selectFixture", () => {
  const available = ["chat", "reasoning-tools"];

  it.each(["reasoning-tools", "  reasoning-tools\n", "fixture:reasoning-tools", "/reasoning-tools"])(
    "picks the fixture named by %j",
    (text) => expect(selectFixture(text, available)).toBe("reasoning-tools"),
  );

  it.each(["", "hello there", "unknown-name", "/../../etc/passwd", "reasoning-tools please"])("falls back to the default for %j", (text) =>
    expect(selectFixture(text, available)).toBe(DEFAULT_FIXTURE),
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
