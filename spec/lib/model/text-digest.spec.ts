import { createHash } from "node:crypto";
import { describe, expect, it } from "@jest/globals";
import { parseTextDigest, splitsCharacter, TextHash, textDigest } from "../../../lib/model/text-digest.js";

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

describe("text digests", () => {
  it("write the SHA-256 of the UTF-8 and the UTF-16 length, and read back either form", () => {
    expect(textDigest("🚀 ok")).toBe(`${sha256("🚀 ok")}:5`);
    expect(parseTextDigest(textDigest("🚀 ok"))).toEqual({ sha256: sha256("🚀 ok"), length: 5 });
    expect(parseTextDigest(sha256("old"))).toEqual({ sha256: sha256("old") });
  });

  it("hash a text in pieces as a whole, a pair split between pieces included, and go on after a digest", () => {
    const hash = new TextHash();
    hash.update("a\ud83d");
    expect(hash.digest()).toBe(textDigest("a\ud83d"));
    hash.update("\ude80b");
    expect(hash.length).toBe(4);
    expect(hash.digest()).toBe(textDigest("a🚀b"));
    expect(hash.sha256()).toBe(sha256("a🚀b"));
  });

  it("hash a long text cut anywhere as the whole, pairs split at the points where pieces are hashed included", () => {
    const longText = "ab🚀c".repeat(12_000);
    for (const cut of [1, 7, 4096, 16_383, 16_384, 20_000]) {
      const hash = new TextHash();
      for (let at = 0; at < longText.length; at += cut) hash.update(longText.slice(at, at + cut));
      expect(hash.digest()).toBe(`${sha256(longText)}:${longText.length}`);
    }
    // The first piece ends in a high surrogate exactly where the pending text is hashed.
    const hash = new TextHash();
    const head = `${"x".repeat(16 * 1024 - 1)}\ud83d`;
    hash.update(head);
    expect(hash.sha256()).toBe(sha256(head));
    hash.update("\ude80y");
    expect(hash.digest()).toBe(textDigest(`${"x".repeat(16 * 1024 - 1)}🚀y`));
  });

  it("tell a cut inside a surrogate pair from one between characters", () => {
    expect(splitsCharacter("a🚀", 2)).toBe(true);
    expect(splitsCharacter("a🚀", 1)).toBe(false);
    expect(splitsCharacter("a🚀", 3)).toBe(false);
    expect(splitsCharacter("\ud83d", 1)).toBe(false);
  });
});
