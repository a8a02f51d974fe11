import { describe, expect, it } from "@jest/globals";
import { lineSplitter } from "../../../lib/kernel-process/output-lines.js";

describe("lineSplitter", () => {
  const split = (chunks: (string | Buffer)[], maxLineChars?: number) => {
    const lines: string[] = [];
    const splitter = lineSplitter((line) => lines.push(line), maxLineChars);
    for (const chunk of chunks) splitter.push(chunk);
    splitter.end();
    return lines;
  };

  it("gives each line once it is complete, across chunks, CRLF or LF, and the last one without a newline", () => {
    expect(split(["one\ntw", "o\r\n", "\nthree"])).toEqual(["one", "two", "", "three"]);
  });

  it("decodes UTF-8 split between chunks", () => {
    const bytes = Buffer.from("日本語\n");
    expect(split([bytes.subarray(0, 4), bytes.subarray(4)])).toEqual(["日本語"]);
  });

  it("cuts a line longer than the limit and drops the rest of it, so a line without end cannot grow the service", () => {
    expect(split(["abcdefgh", "ijkl", "mnop\nnext\n"], 5)).toEqual(["abcde… (cut)", "next"]);
    expect(split(["x".repeat(12)], 5)).toEqual(["xxxxx… (cut)"]);
  });
});
