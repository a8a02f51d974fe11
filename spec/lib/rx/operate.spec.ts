import { describe, expect, it } from "@jest/globals";
import { mergeMap, Observable, of, Subscriber, Subscription, take, type OperatorFunction } from "rxjs";
import { operate, type OperateConfig } from "../../../lib/rx/operate.js";
import { marbles } from "../../support/marbles.js";

/** An operator that is `operate` and nothing else, with the handlers given. */
const through =
  <T>(
    handlers: (destination: OperateConfig<T, T>["destination"]) => Omit<OperateConfig<T, T>, "destination"> = () => ({}),
  ): OperatorFunction<T, T> =>
  (source) =>
    new Observable<T>((destination) => {
      source.subscribe(operate({ destination, ...handlers(destination) }));
    });

describe("operate", () => {
  it("passes items, the end and errors on unchanged when no handler is given, and leaves the source at the end", () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const ending = cold("a-b|");
      expectObservable(ending.pipe(through())).toBe("a-b|");
      expectSubscriptions(ending.subscriptions).toBe("^--!");
      const failing = cold("a-#");
      expectObservable(failing.pipe(through())).toBe("a-#");
      expectSubscriptions(failing.subscriptions).toBe("^-!");
    });
  });

  it("leaves the source when the subscriber leaves", () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold("a-b-c-d|");
      expectObservable(source.pipe(through()), "^--!").toBe("a-b");
      expectSubscriptions(source.subscriptions).toBe("^--!");
    });
  });

  it("should not break unsubscription chain when unsubscribed explicitly", () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold("a-b-c-d|");
      const result = source.pipe(
        mergeMap((item) => of(item)),
        through(),
        mergeMap((item) => of(item)),
      );
      expectObservable(result, "^--!").toBe("a-b");
      expectSubscriptions(source.subscriptions).toBe("^--!");
    });
  });

  it("errors the destination and leaves the source when a handler throws", () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold("a-b-c|");
      const failOnB = through<string>((destination) => ({
        next: (item) => {
          if (item === "b") throw new Error("bad");
          destination.next(item);
        },
      }));
      expectObservable(source.pipe(failOnB)).toBe("a-#", undefined, new Error("bad"));
      expectSubscriptions(source.subscriptions).toBe("^-!");
    });
  });

  it("leaves the ended source but keeps the destination open when the end handler does not end it", () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold("a|");
      const late = cold("--b|");
      const thenLate = through<string>((destination) => ({ complete: () => late.subscribe(destination) }));
      expectObservable(source.pipe(thenLate)).toBe("a--b|");
      expectSubscriptions(source.subscriptions).toBe("^!");
    });
  });

  it("reads nothing more of a synchronous source once the subscriber left", () => {
    const read: number[] = [];
    const seen: number[] = [];
    const counting = through<number>((destination) => ({ next: (item) => (read.push(item), destination.next(item)) }));
    of(1, 2, 3)
      .pipe(counting, take(1))
      .subscribe((item) => seen.push(item));
    expect(seen).toEqual([1]);
    expect(read).toEqual([1]);
  });

  it("finalizes once on an end, an error and a subscriber that leaves, and leaves the source first", () => {
    const log: string[] = [];
    const source = (name: string, end: "complete" | "error" | "none") =>
      new Observable<string>((subscriber) => {
        subscriber.next(name);
        if (end === "complete") subscriber.complete();
        if (end === "error") subscriber.error(new Error(name));
        return () => log.push(`${name} left`);
      });
    const finalizing = (name: string) => through<string>(() => ({ finalize: () => log.push(`${name} finalized`) }));
    source("ends", "complete").pipe(finalizing("ends")).subscribe();
    source("fails", "error")
      .pipe(finalizing("fails"))
      .subscribe({ error: () => log.push("fails error") });
    const open = source("open", "none").pipe(finalizing("open")).subscribe();
    open.unsubscribe();
    open.unsubscribe();
    expect(log.filter((line) => line.endsWith("finalized"))).toEqual(["ends finalized", "fails finalized", "open finalized"]);
    expect(log).toEqual(expect.arrayContaining(["ends left", "fails left", "fails error"]));
    // A source that ended inside its own `subscribe` hands its teardown over only afterwards; one still open is left first.
    expect(log.slice(-2)).toEqual(["open left", "open finalized"]);
  });

  it("runs every teardown added to it once, in the order added, less those removed, however many there are", () => {
    const log: string[] = [];
    const subscriber = operate<string>({ destination: new Subscriber<string>() });
    const teardowns = Array.from({ length: 7 }, (_, index) => () => log.push(`teardown ${index}`));
    const inner = new Subscription(() => log.push("inner"));
    for (const [index, teardown] of teardowns.entries()) {
      subscriber.add(teardown);
      if (index === 2) subscriber.add(inner);
    }
    subscriber.remove(teardowns[1]!);
    subscriber.remove(teardowns[5]!);
    subscriber.unsubscribe();
    subscriber.unsubscribe();
    expect(log).toEqual(["teardown 0", "teardown 2", "inner", "teardown 3", "teardown 4", "teardown 6"]);
    subscriber.add(() => log.push("added after"));
    expect(log.at(-1)).toBe("added after");
  });
});
