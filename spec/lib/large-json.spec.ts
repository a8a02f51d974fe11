/**
 * Large JSON in slices (`lib/a2a/large-json.ts`): the very value
 * `JSON.parse` gives and the very text `JSON.stringify` gives, with the
 * work cut into slices the loop runs between. Where a slice could cut an
 * escape or a surrogate pair in two, the cases below put one there.
 */
import { describe, expect, it } from "@jest/globals";
import { JSON_SLICE_CHARS, LARGE_JSON_CHARS, jsonPieces, parseJsonInSlices } from "../../lib/a2a/large-json.js";

/** Counts the turns a parse let the loop have. */
function countingYield(): { yieldToLoop: () => Promise<void>; turns: () => number } {
  let turns = 0;
  return { yieldToLoop: () => (turns++, Promise.resolve()), turns: () => turns };
}

/** `filler` repeated to `length` characters, with `inset` written at `at` (a boundary to straddle). */
function stringWith(length: number, filler: string, at: number, inset: string): string {
  const base = filler.repeat(Math.ceil(length / filler.length)).slice(0, length);
  return base.slice(0, at) + inset + base.slice(at + inset.length);
}

const record = (content: unknown) =>
  JSON.stringify({ jsonrpc: "2.0", id: "1", result: { kind: "artifact-update", parts: [{ text: content }] } });

describe("parseJsonInSlices", () => {
  it("parses small text at once, as JSON.parse does", async () => {
    const { yieldToLoop, turns } = countingYield();
    expect(await parseJsonInSlices('{"a":[1,"x\\n"]}', yieldToLoop)).toEqual({ a: [1, "x\n"] });
    expect(turns()).toBe(0);
  });

  it("gives a 15 MiB record's value over many turns of the loop, none longer than a slice", async () => {
    const content = 'line of a tool\'s output, "quoted" and \\ slashed\n'.repeat((15 * 1024 * 1024) / 48);
    const text = record(content);
    const { yieldToLoop, turns } = countingYield();
    expect(await parseJsonInSlices(text, yieldToLoop)).toEqual(JSON.parse(text));
    expect(turns()).toBeGreaterThanOrEqual(Math.floor(text.length / JSON_SLICE_CHARS));
  });

  // Each escape form ends exactly on the boundary, or one to five characters past it.
  const escapes = ["\\n", '\\"', "\\\\", "\\u00e9", "\\ud83d\\ude00", "\\\\\\n", "\\/"];
  for (const escape of escapes) {
    it(`never cuts the escape ${escape} at a slice's end`, async () => {
      for (let shift = -6; shift <= 1; shift++) {
        const raw = stringWith(2 * JSON_SLICE_CHARS, "abcdefgh", JSON_SLICE_CHARS + shift, escape);
        const text = `{"long":"${raw}","after":1}`;
        expect(await parseJsonInSlices(text, () => Promise.resolve())).toEqual(JSON.parse(text));
      }
    });
  }

  it("keeps a raw surrogate pair split by a slice's end whole", async () => {
    const raw = stringWith(2 * JSON_SLICE_CHARS, "abcd", JSON_SLICE_CHARS - 1, "😀");
    const text = JSON.stringify({ long: raw, more: [raw, { deeper: raw }] });
    const value = (await parseJsonInSlices(text, () => Promise.resolve())) as { long: string };
    expect(value).toEqual(JSON.parse(text));
    expect(value.long).toBe(raw);
  });

  it("parses long strings as keys, and a key named __proto__ as data, as JSON.parse does", async () => {
    const longKey = "k".repeat(LARGE_JSON_CHARS);
    const text = `{"__proto__":{"polluted":true},"${longKey}":"value","list":["${"v".repeat(100_000)}"]}`;
    const value = (await parseJsonInSlices(text, () => Promise.resolve())) as Record<string, unknown>;
    expect(value).toEqual(JSON.parse(text));
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.keys(value)).toContain("__proto__");
    expect(value[longKey]).toBe("value");
  });

  it("refuses text that is no JSON as JSON.parse does: a raw control character, an unclosed string, a bad escape", async () => {
    const long = "x".repeat(LARGE_JSON_CHARS);
    for (const broken of [`{"a":"${long}\u0001"}`, `{"a":"${long}`, `{"a":"${long}\\q"}`, `{"a":"${long}"}}`]) {
      expect(() => JSON.parse(broken)).toThrow(SyntaxError);
      await expect(parseJsonInSlices(broken, () => Promise.resolve())).rejects.toThrow(SyntaxError);
    }
  });
});

describe("jsonPieces", () => {
  it("gives a small value as one piece, its JSON", () => {
    expect([...jsonPieces({ type: "TEXT_MESSAGE_CONTENT", delta: "hi" })]).toEqual(['{"type":"TEXT_MESSAGE_CONTENT","delta":"hi"}']);
  });

  it("gives JSON.stringify's very text for long strings, in pieces of at most a slice's escaping", () => {
    const content = stringWith(5 * JSON_SLICE_CHARS, 'a "quoted" line\n\u0007', JSON_SLICE_CHARS - 1, "😀");
    const event = { type: "TOOL_CALL_RESULT", messageId: "m", toolCallId: "t", content, extra: [content.slice(0, 70_000), 1] };
    const pieces = [...jsonPieces(event)];
    expect(pieces.join("")).toBe(JSON.stringify(event));
    expect(pieces.length).toBeGreaterThanOrEqual(5);
    // An escaped slice may be longer than the slice (a quote becomes two characters, a bell six), never by more than that.
    for (const piece of pieces) expect(piece.length).toBeLessThanOrEqual(6 * JSON_SLICE_CHARS);
  });

  it("leaves a string that merely looks like a placeholder as it is", () => {
    const event = { a: "\u0000large-json-00-0", b: "y".repeat(100_000) };
    expect([...jsonPieces(event)].join("")).toBe(JSON.stringify(event));
  });
});
