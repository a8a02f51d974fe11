import { createHash } from "node:crypto";
import { describe, expect, it } from "@jest/globals";
import { canonicalDigest } from "../../../lib/state/canonical-digest.js";

/** Written out by hand, then hashed as UTF-8 bytes: an answer that does not go through the code under test. */
const sha256OfText = (text: string) => createHash("sha256").update(Buffer.from(text, "utf8")).digest("hex");

describe("canonicalDigest", () => {
  it("sorts keys, uses compact separators and keeps non-ASCII as UTF-8", () => {
    expect(canonicalDigest({ b: 1, a: "é" })).toBe(sha256OfText('{"a":"é","b":1}'));
    expect(sha256OfText('{"a":"é","b":1}')).not.toBe(sha256OfText('{"a":"\\u00e9","b":1}'));
  });

  it("sorts keys at every depth, inside arrays too, and keeps array order", () => {
    const value = { z: [{ y: 2, x: 1 }, 3, "s"], a: { d: null, c: true, b: { f: 1.5, e: -0.25 } } };
    expect(canonicalDigest(value)).toBe(sha256OfText('{"a":{"b":{"e":-0.25,"f":1.5},"c":true,"d":null},"z":[{"x":1,"y":2},3,"s"]}'));
  });

  it("digests an applied resume as the text of {payload, status}, and {} as the well-known SHA-256 of '{}'", () => {
    expect(canonicalDigest({ status: "resolved", payload: { decision: "allow_once" } })).toBe(
      sha256OfText('{"payload":{"decision":"allow_once"},"status":"resolved"}'),
    );
    expect(canonicalDigest({})).toBe("44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a");
  });

  it("escapes quotes, backslashes and control characters the way JSON requires, and nothing else", () => {
    expect(canonicalDigest({ k: 'a"b\\c\n\u0001日本' })).toBe(sha256OfText('{"k":"a\\"b\\\\c\\n\\u0001日本"}'));
  });

  it("orders keys by code point, as Python does, not by UTF-16 unit", () => {
    // U+FF5E sorts before U+1F600 by code point, after it by UTF-16 unit (0xD83D < 0xFF5E).
    expect(canonicalDigest({ "😀": 1, "～": 2 })).toBe(sha256OfText('{"～":2,"😀":1}'));
  });

  it("orders by code point only the objects whose keys hold a surrogate, and the rest as plainly sorted, at every depth", () => {
    const value = { "～": { b: 1, "😀": { "\uE000": 1, é: 2, a: 3 }, A: 4 }, "😀": 5, z: 6, "": 7 };
    expect(canonicalDigest(value)).toBe(sha256OfText('{"":7,"z":6,"～":{"A":4,"b":1,"😀":{"a":3,"é":2,"\uE000":1}},"😀":5}'));
  });

  it("leaves out undefined properties like JSON does, and refuses non-finite numbers", () => {
    expect(canonicalDigest({ a: 1, b: undefined })).toBe(sha256OfText('{"a":1}'));
    expect(() => canonicalDigest({ a: Number.NaN })).toThrow(TypeError);
    expect(() => canonicalDigest(undefined)).toThrow(TypeError);
  });
});
