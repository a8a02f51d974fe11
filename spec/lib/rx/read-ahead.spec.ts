import { describe, expect, it } from "@jest/globals";
import { lastValueFrom, Observable, take, toArray } from "rxjs";
import { readAhead } from "../../../lib/rx/read-ahead.js";
import { marbles } from "../../support/marbles.js";

/** A `holdWhileUnread` that notes each hold, and whether its promise has settled. */
function holds() {
  const taken: Array<{ settled: boolean }> = [];
  const hold = (read: Promise<void>) => {
    const note = { settled: false };
    taken.push(note);
    void read.then(() => (note.settled = true));
  };
  return { taken, hold };
}

describe("readAhead", () => {
  it("subscribes to the source at once and hands what came before the reader over in order, then the rest live", () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      // A group takes the frames of its characters: "(ab)" from frame 3 puts the next item at 7.
      const source = cold("a-b----c-|");
      const read = readAhead(source, () => {});
      expectObservable(read, "---^").toBe("---(ab)c-|");
      expectSubscriptions(source.subscriptions).toBe("^--------!");
    });
  });

  it("keeps an end or an error that came before the reader, and tells it after the items", () => {
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(
        readAhead(cold("a|"), () => {}),
        "--^",
      ).toBe("--(a|)");
      expectObservable(
        readAhead(cold("a#"), () => {}),
        "--^",
      ).toBe("--(a#)");
      expectObservable(
        readAhead(cold("-|"), () => {}),
        "--^",
      ).toBe("--|");
    });
  });

  it("leaves the source when the reader leaves (a request given up), whether or not items were kept", () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const early = cold("a-b---c-d|");
      expectObservable(
        readAhead(early, () => {}),
        "--^-!",
      ).toBe("--(ab)");
      expectSubscriptions(early.subscriptions).toBe("^---!");
      const quiet = cold("------a|");
      expectObservable(
        readAhead(quiet, () => {}),
        "-^!",
      ).toBe("-");
      expectSubscriptions(quiet.subscriptions).toBe("^-!");
    });
  });

  it("leaves the source when the reader takes what it needs from the kept items", async () => {
    let unsubscribed = false;
    const source = new Observable<number>((subscriber) => {
      subscriber.next(1);
      subscriber.next(2);
      subscriber.next(3);
      return () => (unsubscribed = true);
    });
    const read = readAhead(source, () => {});
    expect(await lastValueFrom(read.pipe(take(2), toArray()))).toEqual([1, 2]);
    expect(unsubscribed).toBe(true);
  });

  it("asks for one hold at its first kept item, released once the reader has the kept items", async () => {
    const { taken, hold } = holds();
    let emit!: (item: string) => void;
    const source = new Observable<string>((subscriber) => void (emit = (item) => subscriber.next(item)));
    const read = readAhead(source, hold);
    expect(taken).toEqual([]);
    emit("a");
    emit("b");
    expect(taken).toEqual([{ settled: false }]);
    const seen: string[] = [];
    read.subscribe((item) => seen.push(item));
    expect(seen).toEqual(["a", "b"]);
    await Promise.resolve();
    expect(taken).toEqual([{ settled: true }]);
    // Read live from then on: no further hold.
    emit("c");
    expect(seen).toEqual(["a", "b", "c"]);
    expect(taken).toHaveLength(1);
  });

  it("asks for no hold when nothing came before the reader", () => {
    const { taken, hold } = holds();
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(readAhead(cold("--a|"), hold), "^").toBe("--a|");
    });
    expect(taken).toEqual([]);
  });

  it("keeps an item the source sends while the kept ones are handed over behind them", () => {
    let emit!: (item: string) => void;
    const source = new Observable<string>((subscriber) => {
      emit = (item) => subscriber.next(item);
      subscriber.next("a");
      subscriber.next("b");
    });
    const read = readAhead(source, () => {});
    const seen: string[] = [];
    read.subscribe((item) => {
      seen.push(item);
      if (item === "a") emit("c");
    });
    expect(seen).toEqual(["a", "b", "c"]);
  });

  it("is read once", () => {
    marbles().run(({ cold, expectObservable }) => {
      const read = readAhead(cold("a|"), () => {});
      expectObservable(read, "-^").toBe("-(a|)");
      expectObservable(read, "--^").toBe("--#", undefined, new Error("a stream read ahead is read once"));
    });
  });
});
