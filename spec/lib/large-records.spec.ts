/**
 * A stream's large records parsed in slices, in order with the rest
 * (`lib/a2a/large-records.ts`): what comes out is what `resultOf` makes of
 * each record, in the order they came, whatever was parsed how; and a
 * large record that is no JSON fails the stream as a small one does.
 */
import { describe, expect, it } from "@jest/globals";
import { Subject } from "rxjs";
import type { SseRecord } from "../../lib/a2a/sse-parser.js";
import { LARGE_JSON_CHARS } from "../../lib/a2a/large-json.js";
import { largeRecordsInSlices, parseKernelJsonInSlices } from "../../lib/a2a/large-records.js";
import { parseJson } from "../../lib/a2a/rpc-errors.js";
import { AguiError } from "../../lib/errors.js";

const message = (data: string, event = "message"): SseRecord => ({ data, event });
const small = (n: number) => message(JSON.stringify({ n }));
const large = (n: number) => message(JSON.stringify({ n, text: "x".repeat(LARGE_JSON_CHARS) }));

/** A turn of the loop the test hands out one at a time: nothing of a large record is parsed until it says so. */
function manualTurns(): { yieldToLoop: () => Promise<void>; next: () => void; waiting: () => number } {
  const queue: Array<() => void> = [];
  return {
    yieldToLoop: () => new Promise<void>((resolve) => queue.push(resolve)),
    next: () => queue.shift()?.(),
    waiting: () => queue.length,
  };
}

const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("largeRecordsInSlices", () => {
  const resultOf = (record: SseRecord, frame?: unknown) => {
    const value = (frame ?? parseJson(record.data)) as { n: number; text?: string };
    return { n: value.n, parsedInSlices: frame !== undefined, textLength: value.text?.length ?? 0 };
  };

  it("passes small records through at once, and holds those after a large one until it is parsed", async () => {
    const turns = manualTurns();
    const records = new Subject<SseRecord>();
    const seen: Array<{ n: number; parsedInSlices: boolean; textLength: number }> = [];
    let completed = false;
    records
      .pipe(largeRecordsInSlices(resultOf, turns.yieldToLoop))
      .subscribe({ next: (result) => seen.push(result), complete: () => (completed = true) });

    records.next(small(1));
    expect(seen.map(({ n }) => n)).toEqual([1]);
    records.next(large(2));
    records.next(small(3));
    records.complete();
    await flush();
    // The large record waits for its turns; the one after it and the end wait behind it.
    expect(seen.map(({ n }) => n)).toEqual([1]);
    expect(completed).toBe(false);
    while (turns.waiting() > 0) {
      turns.next();
      await flush();
    }
    expect(seen).toEqual([
      { n: 1, parsedInSlices: false, textLength: 0 },
      { n: 2, parsedInSlices: true, textLength: LARGE_JSON_CHARS },
      { n: 3, parsedInSlices: false, textLength: 0 },
    ]);
    expect(completed).toBe(true);
  });

  it("fails the stream with A2A_PROTOCOL_ERROR for a large record that is no JSON, after the records before it", async () => {
    const records = new Subject<SseRecord>();
    const seen: number[] = [];
    const failed = new Promise<unknown>((resolve) =>
      records.pipe(largeRecordsInSlices(resultOf)).subscribe({ next: ({ n }) => seen.push(n), error: resolve }),
    );
    records.next(small(1));
    records.next(message(`{"n":2,"text":"${"x".repeat(LARGE_JSON_CHARS)}`));
    records.next(small(3));
    const error = await failed;
    expect(error).toBeInstanceOf(AguiError);
    expect((error as AguiError).code).toBe("A2A_PROTOCOL_ERROR");
    expect(seen).toEqual([1]);
  });

  it("tells the source's error after the large record before it", async () => {
    const records = new Subject<SseRecord>();
    const seen: number[] = [];
    const failed = new Promise<unknown>((resolve) =>
      records.pipe(largeRecordsInSlices(resultOf)).subscribe({ next: ({ n }) => seen.push(n), error: resolve }),
    );
    records.next(large(1));
    records.error(new Error("cut"));
    expect(((await failed) as Error).message).toBe("cut");
    expect(seen).toEqual([1]);
  });
});

describe("parseKernelJsonInSlices", () => {
  it("refuses JSON nesting deeper than the kernel's limit, as parseJson does", async () => {
    const deep = `${"[".repeat(101)}"${"x".repeat(LARGE_JSON_CHARS)}"${"]".repeat(101)}`;
    expect(() => parseJson(deep)).toThrow(AguiError);
    await expect(parseKernelJsonInSlices(deep)).rejects.toMatchObject({ code: "A2A_PROTOCOL_ERROR" });
  });
});
