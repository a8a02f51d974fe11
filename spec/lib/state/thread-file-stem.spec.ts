import { createHash } from "node:crypto";
import { describe, expect, it } from "@jest/globals";
import { MAX_STEM_LENGTH, threadFileStem } from "../../../lib/state/thread-file-stem.js";

const hexStem = (id: string) => `aguiid~${Buffer.from(id, "utf8").toString("hex")}`;
const hashStem = (id: string) => `aguihash~${createHash("sha256").update(Buffer.from(id, "utf8")).digest("hex")}`;

describe("threadFileStem", () => {
  it("uses a lowercase id of safe characters as it is", () => {
    for (const id of ["thread-1", "a", "abc_def.ghi-0", "0", ".hidden", "com10", "lpt0", "conx", "x.con", "-"]) {
      expect(threadFileStem(id)).toBe(id);
    }
  });

  it("hex-encodes ids with uppercase letters, so ids differing only in case never share a file", () => {
    expect(threadFileStem("A")).toBe("aguiid~41");
    expect(threadFileStem("a")).toBe("a");
    const stems = ["thread", "Thread", "THREAD", "tHREAD"].map(threadFileStem);
    expect(new Set(stems.map((stem) => stem.toLowerCase())).size).toBe(4);
  });

  it("hex-encodes '.', '..' and ids with a trailing dot", () => {
    expect(threadFileStem(".")).toBe("aguiid~2e");
    expect(threadFileStem("..")).toBe("aguiid~2e2e");
    expect(threadFileStem("abc.")).toBe(hexStem("abc."));
  });

  it("hex-encodes ids whose part before the first dot is a Windows device name, in any case", () => {
    for (const id of ["con", "con.txt", "prn", "aux.json", "nul", "com1", "com9.x.y", "lpt1", "lpt9", "CON", "Lpt3.log"]) {
      expect(threadFileStem(id)).toBe(hexStem(id));
    }
  });

  it("hex-encodes unsafe characters and non-ASCII ids as UTF-8", () => {
    expect(threadFileStem("../etc/passwd")).toBe(hexStem("../etc/passwd"));
    expect(threadFileStem("a b")).toBe("aguiid~612062");
    expect(threadFileStem("é")).toBe("aguiid~c3a9");
    expect(threadFileStem("スレッド")).toBe(hexStem("スレッド"));
    expect(threadFileStem("🧵")).toBe("aguiid~f09fa7b5");
    expect(threadFileStem("")).toBe("aguiid~");
    expect(threadFileStem("a~b")).toBe(hexStem("a~b"));
  });

  it("hashes an id whose hex stem would pass 200 characters", () => {
    const longest = "X".repeat(96); // 7 + 2 * 96 = 199 characters
    expect(hexStem(longest)).toHaveLength(199);
    expect(threadFileStem(longest)).toBe(hexStem(longest));
    const tooLong = `${longest}X`; // 201 characters as hex
    expect(threadFileStem(tooLong)).toBe(hashStem(tooLong));
    const unicode = "é".repeat(500);
    expect(threadFileStem(unicode)).toBe(hashStem(unicode));
    expect(threadFileStem(unicode)).toMatch(/^aguihash~[0-9a-f]{64}$/);
  });

  it("caps raw stems at 200 characters too, so every file name fits the 255-byte limit", () => {
    const raw = "a".repeat(MAX_STEM_LENGTH);
    expect(threadFileStem(raw)).toBe(raw);
    const long = "a".repeat(500);
    expect(threadFileStem(long)).toBe(hashStem(long));
    expect(threadFileStem("A".repeat(500))).toBe(hashStem("A".repeat(500)));
    expect(threadFileStem("A".repeat(500))).not.toBe(threadFileStem("a".repeat(500)));
  });

  it("never yields a path separator, a trailing dot or an over-long name", () => {
    const ids = ["..", "a/b", "a\\b", "con.", "x".repeat(1000), "\u0000", "a\nb", "Ω/..", "%2e%2e"];
    for (const id of ids) {
      const stem = threadFileStem(id);
      expect(stem).toMatch(/^[a-z0-9_.~-]+$/);
      expect(stem.endsWith(".")).toBe(false);
      expect(stem.length).toBeLessThanOrEqual(MAX_STEM_LENGTH);
    }
  });

  it("refuses an id with a lone surrogate rather than letting two ids share a file", () => {
    expect(() => threadFileStem("a\uD800")).toThrow(RangeError);
    expect(() => threadFileStem("\uDC00b")).toThrow(RangeError);
    expect(threadFileStem("\uD83E\uDDF5")).toBe("aguiid~f09fa7b5");
  });
});
