import { describe, expect, it } from "@jest/globals";
import { of, Subject, take } from "rxjs";
import { awaitInOrder } from "../../operators/await-in-order.js";
import { marbles } from "../support/marbles.js";

describe("awaitInOrder", () => {
  it("passes items that need no work at once, in the same frame", () => {
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("ab-c|").pipe(awaitInOrder((item: string) => item.toUpperCase()))).toBe("AB-C|", { A: "A", B: "B", C: "C" });
    });
  });

  it("holds everything after an item that needs asynchronous work, the source's end and errors included, and keeps the order", async () => {
    const source = new Subject<string>();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const seen: string[] = [];
    let ended = "";
    source.pipe(awaitInOrder((item) => (item === "b" ? gate.then(() => "B") : item))).subscribe({
      next: (item) => seen.push(item),
      error: (error: Error) => (ended = `error ${error.message}`),
    });
    source.next("a");
    source.next("b");
    source.next("c");
    source.error(new Error("cut"));
    expect(seen).toEqual(["a"]);
    expect(ended).toBe("");
    release();
    await gate;
    await Promise.resolve();
    expect(seen).toEqual(["a", "B", "c"]);
    expect(ended).toBe("error cut");
  });

  it("keeps the order when the source emits again while queued items are being passed on", async () => {
    const source = new Subject<string>();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const seen: string[] = [];
    source.pipe(awaitInOrder((item) => (item === "a" ? gate.then(() => "A") : item))).subscribe((item) => {
      seen.push(item);
      // A subscriber that feeds the source as it reads, while "c" still waits in the queue.
      if (item === "b") source.next("d");
    });
    source.next("a");
    source.next("b");
    source.next("c");
    release();
    await gate;
    await Promise.resolve();
    expect(seen).toEqual(["A", "b", "c", "d"]);
  });

  it("does no work for what a synchronous source sends after the subscriber left", () => {
    const worked: number[] = [];
    const taken: number[] = [];
    of(1, 2, 3)
      .pipe(
        awaitInOrder((item: number) => (worked.push(item), item)),
        take(1),
      )
      .subscribe((item) => taken.push(item));
    expect(taken).toEqual([1]);
    expect(worked).toEqual([1]);
  });
});
