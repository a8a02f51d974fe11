import { describe, expect, it } from "@jest/globals";
import { pythonJsonDumps, pythonStr, pythonTruthy } from "../../../lib/interrupts/python-json.js";

// Expected strings were produced by CPython 3 `json.dumps(value, ensure_ascii=False)`.
describe("pythonJsonDumps", () => {
  it.each([
    [{ action: "confirm", parameter_overrides: {} }, '{"action": "confirm", "parameter_overrides": {}}'],
    [
      {
        action: "adjust",
        parameter_overrides: {
          InstanceType: "ecs.g7.large",
          Count: 2,
          Ratio: 1.5,
          Tags: ["a", "b"],
          Nested: { k: null, t: true, f: false },
        },
      },
      '{"action": "adjust", "parameter_overrides": {"InstanceType": "ecs.g7.large", "Count": 2, "Ratio": 1.5, "Tags": ["a", "b"], "Nested": {"k": null, "t": true, "f": false}}}',
    ],
    [{ b: 1, a: [{}, []] }, '{"b": 1, "a": [{}, []]}'],
    [{}, "{}"],
    [[], "[]"],
  ])("writes %j with Python's separators and key order", (value, expected) => {
    expect(pythonJsonDumps(value)).toBe(expected);
  });

  it("keeps non-ASCII text as is (ensure_ascii=False)", () => {
    expect(pythonJsonDumps("日本語 🚀 café")).toBe('"日本語 🚀 café"');
  });

  it("escapes only quote, backslash and control characters, as Python does", () => {
    const text = 'quote " backslash \\ newline \n tab \t cr \r bs \b ff \f unit \u001f nul \u0000 del \u007f ls \u2028';
    expect(pythonJsonDumps(text)).toBe(
      '"quote \\" backslash \\\\ newline \\n tab \\t cr \\r bs \\b ff \\f unit \\u001f nul \\u0000 del \u007f ls \u2028"',
    );
  });

  it("leaves a lone surrogate unescaped, unlike JSON.stringify", () => {
    expect(pythonJsonDumps("\ud800")).toBe('"\ud800"');
    expect(JSON.stringify("\ud800")).not.toBe('"\ud800"');
  });

  it("writes numbers as Python reads them back from JSON: ints as digits, floats in repr form", () => {
    // 1.0 reaches us as 1 (JSON.parse keeps no difference), so it is written as the int Python would parse from "1".
    expect(pythonJsonDumps([1, 1.0, 1.5, 0.0001, 0.00001, 1e-7, 1.5e300, -2.5, 123456789.125, 1e20, 1e21, -0])).toBe(
      "[1, 1, 1.5, 0.0001, 1e-05, 1e-07, 1.5e+300, -2.5, 123456789.125, 100000000000000000000, 1e+21, 0]",
    );
  });

  it("compact and sorted like separators=(',', ':'), sort_keys=True, ordering keys by code point", () => {
    const value = { b: 1, a: { é: 1, e: 2, "\u{1F600}": 3, "\uffff": 4 } };
    expect(pythonJsonDumps(value, { compact: true, sortKeys: true })).toBe('{"a":{"e":2,"é":1,"\uffff":4,"\u{1F600}":3},"b":1}');
  });

  it("omits undefined properties and rejects what JSON cannot hold", () => {
    expect(pythonJsonDumps({ a: undefined, b: 1 })).toBe('{"b": 1}');
    expect(() => pythonJsonDumps(() => 1)).toThrow(TypeError);
  });
});

describe("pythonTruthy and pythonStr", () => {
  it("treat empty containers, empty strings, zero, false and null as false", () => {
    expect([[], {}, "", 0, false, null, undefined].map(pythonTruthy)).toEqual([false, false, false, false, false, false, false]);
    expect([[0], { a: 1 }, "x", 2, true].map(pythonTruthy)).toEqual([true, true, true, true, true]);
  });

  it("spell scalars as Python's str() does", () => {
    expect([pythonStr("x"), pythonStr(3), pythonStr(true), pythonStr(null), pythonStr(0.5)]).toEqual(["x", "3", "True", "None", "0.5"]);
  });
});
