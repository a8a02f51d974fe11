import { describe, expect, it } from "@jest/globals";
import { Subject, take } from "rxjs";
import { awaitInOrder } from "../../operators/await-in-order.js";
import { inChain, marbles, synchronousSource } from "../support/marbles.js";

describe("awaitInOrder", () => {
  it("passes items that need no work at once, in the same frame", () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const items = cold("ab-c|");
      expectObservable(items.pipe(awaitInOrder((item: string) => item.toUpperCase()))).toBe("AB-C|", { A: "A", B: "B", C: "C" });
      expectSubscriptions(items.subscriptions).toBe("^---!");
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

  it("does no work for what a synchronous source sends after the subscriber left, and stops that source", () => {
    const { source, sent } = synchronousSource([1, 2, 3]);
    const worked: number[] = [];
    const taken: number[] = [];
    source
      .pipe(
        awaitInOrder((item: number) => (worked.push(item), item)),
        take(1),
      )
      .subscribe((item) => taken.push(item));
    expect(taken).toEqual([1]);
    expect(worked).toEqual([1]);
    expect(sent).toEqual([1]);
  });

  it("passes a synchronous source's items and end at once while no work is pending", () => {
    const { source } = synchronousSource(["a", "b"]);
    const seen: string[] = [];
    let completed = false;
    source.pipe(awaitInOrder((item: string) => item.toUpperCase())).subscribe({
      next: (item) => seen.push(item),
      complete: () => (completed = true),
    });
    expect(seen).toEqual(["A", "B"]);
    expect(completed).toBe(true);
  });

  it("should not break unsubscription chain when unsubscribed explicitly", () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const items = cold("a-b-c-d|");
      expectObservable(items.pipe(inChain(awaitInOrder((item: string) => item.toUpperCase()))), "^--!").toBe("A-B", { A: "A", B: "B" });
      expectSubscriptions(items.subscriptions).toBe("^--!");
    });
  });

  it("leaves its source, and drops what waits in the queue, when the subscriber leaves while work is pending", async () => {
    const source = new Subject<string>();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const worked: string[] = [];
    const seen: string[] = [];
    const subscription = source
      .pipe(awaitInOrder((item) => (worked.push(item), item === "a" ? gate.then(() => "A") : item)))
      .subscribe((item) => seen.push(item));
    source.next("a");
    source.next("b");
    subscription.unsubscribe();
    expect(source.observed).toBe(false);
    release();
    await gate;
    await Promise.resolve();
    expect(worked).toEqual(["a"]);
    expect(seen).toEqual([]);
  });
});
