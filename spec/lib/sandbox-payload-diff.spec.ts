/**
 * The sandbox compare's look inside payloads (lib/http/sandbox/payload-diff.js,
 * a browser module with no DOM use until it draws): the words that changed,
 * and the fields that differ, with ids and times left out but domain ids
 * (a region) compared.
 */
import { describe, expect, it } from "@jest/globals";

type WordOp = { op: "same" | "removed" | "added"; text: string };
interface PayloadDiff {
  wordDiff(a: string, b: string): WordOp[];
  fieldChanges(a: unknown, b: unknown): Array<{ path: string; a: unknown; b: unknown }>;
  payloadChanges(a: unknown, b: unknown): Array<{ label: string; changes: Array<{ path: string; a: unknown; b: unknown }> }>;
}

// A path held in a variable: the module is plain JavaScript for the browser, typed here by the interface above.
const MODULE = "../../lib/http/sandbox/payload-diff.js";
const { wordDiff, fieldChanges, payloadChanges } = (await import(MODULE)) as PayloadDiff;

const run = (...events: Array<Record<string, unknown>>) => ({ events: events.map((event) => ({ event })) });

describe("the compare's payload diff", () => {
  it("marks the one word that changed, and gives both texts back whole", () => {
    const a = "I saved the plan as `stack-plan.md`.";
    const b = "I wrote the plan as `stack-plan.md`.";
    const ops = wordDiff(a, b);
    expect(ops).toEqual([
      { op: "same", text: "I " },
      { op: "removed", text: "saved" },
      { op: "added", text: "wrote" },
      { op: "same", text: " the plan as `stack-plan.md`." },
    ]);
    expect(
      ops
        .filter((op) => op.op !== "added")
        .map((op) => op.text)
        .join(""),
    ).toBe(a);
    expect(
      ops
        .filter((op) => op.op !== "removed")
        .map((op) => op.text)
        .join(""),
    ).toBe(b);
  });

  it("keeps words both texts share between changes, and ends with what only one has", () => {
    const ops = wordDiff("one two three", "one 2 three four");
    expect(ops).toEqual([
      { op: "same", text: "one " },
      { op: "removed", text: "two" },
      { op: "added", text: "2" },
      { op: "same", text: " three" },
      { op: "added", text: " four" },
    ]);
  });

  it("compares JSON text as JSON, by path, leaving out ids and times but not a region id", () => {
    const a = JSON.stringify({ regionId: "cn-hangzhou", runId: "r-1", startedAt: "t1", resources: ["VPC", "ECS"] });
    const b = JSON.stringify({ resources: ["VPC", "SLB"], startedAt: "t2", runId: "r-2", regionId: "cn-beijing" });
    expect(fieldChanges(a, b)).toEqual([
      { path: "/regionId", a: "cn-hangzhou", b: "cn-beijing" },
      { path: "/resources/1", a: "ECS", b: "SLB" },
    ]);
    expect(
      fieldChanges({ id: 1, timestamp: 2, durationMs: 3, toolCallId: "x" }, { id: 9, timestamp: 8, durationMs: 7, toolCallId: "y" }),
    ).toEqual([]);
  });

  it("pairs tool calls in order, and compares state snapshots, deltas and the state they leave", () => {
    const calls = (region: string, result: string) => [
      { type: "TOOL_CALL_START", toolCallId: `c-${region}`, toolCallName: "deploy" },
      { type: "TOOL_CALL_ARGS", toolCallId: `c-${region}`, delta: JSON.stringify({ region }) },
      { type: "TOOL_CALL_END", toolCallId: `c-${region}` },
      { type: "TOOL_CALL_RESULT", toolCallId: `c-${region}`, messageId: `m-${region}`, content: result },
    ];
    const a = run(
      ...calls("a", "ok"),
      { type: "STATE_SNAPSHOT", snapshot: { step: "plan" } },
      { type: "STATE_DELTA", delta: [{ op: "replace", path: "/step", value: "done" }] },
    );
    const b = run(
      ...calls("b", "ok"),
      { type: "STATE_SNAPSHOT", snapshot: { step: "plan" } },
      { type: "STATE_DELTA", delta: [{ op: "replace", path: "/step", value: "failed" }] },
    );
    expect(payloadChanges(a, b)).toEqual([
      { label: "tool call 1 · deploy · arguments", changes: [{ path: "/region", a: "a", b: "b" }] },
      { label: "STATE_DELTA 1", changes: [{ path: "/0/value", a: "done", b: "failed" }] },
      { label: "state at the end", changes: [{ path: "/step", a: "done", b: "failed" }] },
    ]);
  });
});
