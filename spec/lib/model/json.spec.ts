import { createHash } from "node:crypto";
import { describe, expect, it } from "@jest/globals";
import { canonicalJson, isJsonObject, isNonEmptyString, nonEmptyString } from "../../../lib/model/json.js";
import { canonicalDigest } from "../../../lib/state/canonical-digest.js";

describe("isJsonObject", () => {
  it.each([{}, { a: 1 }, Object.create(null) as object, JSON.parse('{"nested":{"x":[1]}}') as unknown])(
    "accepts the object %p",
    (value) => {
      expect(isJsonObject(value)).toBe(true);
    },
  );

  it.each([null, undefined, [], [{ a: 1 }], "{}", 0, true])("refuses %p, whose fields cannot be read as an object's", (value) => {
    expect(isJsonObject(value)).toBe(false);
  });
});

describe("isNonEmptyString and nonEmptyString", () => {
  it("take a string with at least one character, spaces included", () => {
    for (const value of ["a", " ", "task-1"]) {
      expect(isNonEmptyString(value)).toBe(true);
      expect(nonEmptyString(value)).toBe(value);
    }
  });

  it.each(["", undefined, null, 0, 1, ["a"], { id: "a" }])("treat %p as absent", (value) => {
    expect(isNonEmptyString(value)).toBe(false);
    expect(nonEmptyString(value)).toBeUndefined();
  });

  it("let a fallback follow an absent value", () => {
    expect(nonEmptyString("") ?? nonEmptyString("run-2") ?? "pipeline").toBe("run-2");
  });
});

describe("canonicalJson", () => {
  it("sorts keys at every depth and keeps arrays in order", () => {
    expect(canonicalJson({ b: [{ d: 1, c: 2 }], a: null })).toBe('{"a":null,"b":[{"c":2,"d":1}]}');
    expect(canonicalJson({ z: 1, a: { y: "é", b: [2] } })).toBe('{"a":{"b":[2],"y":"é"},"z":1}');
  });

  it("writes what JSON cannot hold as JSON.stringify does", () => {
    expect(canonicalJson(undefined)).toBe("null");
    expect(canonicalJson({ n: Number.NaN, gone: undefined, list: [undefined] })).toBe('{"list":[null],"n":null}');
  });

  it("writes a value whose keys are in order already as JSON.stringify does, and any other value sorted", () => {
    const ordered = { a: [{ b: 1, c: "x" }, null], d: { e: true } };
    expect(canonicalJson(ordered)).toBe(JSON.stringify(ordered));
    expect(canonicalJson({ a: { d: 1, c: 2 } })).toBe('{"a":{"c":2,"d":1}}');
    expect(canonicalJson([{ b: 1, a: 2 }])).toBe('[{"a":2,"b":1}]');
    class Point {
      y = 2;
      x = 1;
    }
    expect(canonicalJson({ p: new Point() })).toBe('{"p":{"x":1,"y":2}}');
    expect(canonicalJson({ when: new Date(0), n: Object(5) as unknown })).toBe('{"n":{},"when":"1970-01-01T00:00:00.000Z"}');
    expect(canonicalJson({ a: { toJSON: () => ({ z: 1, y: 2 }) } })).toBe('{"a":{"y":2,"z":1}}');
  });

  it("puts integer-like keys first in numeric order, so its text is not the digest's", () => {
    const value = { b: 1, "10": 2, "9": 3 };
    expect(canonicalJson(value)).toBe('{"9":3,"10":2,"b":1}');
    const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");
    expect(canonicalDigest(value)).toBe(sha256('{"10":2,"9":3,"b":1}'));
  });
});
