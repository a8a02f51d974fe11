import { describe, expect, it } from "@jest/globals";
import { catchError, endWith, finalize, map, Observable, of, pipe, take, type MonoTypeOperatorFunction } from "rxjs";
import { emitEach, emitEachPer, pipeStages } from "../../operators/emit-each.js";
import { engageFrom } from "../../operators/engage-from.js";
import { inChain, marbles, synchronousSource } from "../support/marbles.js";

const upper: MonoTypeOperatorFunction<string> = map((item) => item.toUpperCase());
const isX = (item: string) => item === "x";

describe("engageFrom", () => {
  it("passes items around the operator until the first that engages it, then everything through it", () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold("ab-x-c|");
      expectObservable(source.pipe(engageFrom(isX, upper))).toBe("ab-X-C|");
      expectSubscriptions(source.subscriptions).toBe("^-----!");
    });
  });

  it("never subscribes the operator when nothing engages it: the end passes around it too", () => {
    let subscribed = 0;
    const counted = (source: Parameters<typeof upper>[0]) => {
      subscribed++;
      return source.pipe(upper, endWith("end"));
    };
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("ab|").pipe(engageFrom(isX, counted))).toBe("ab|");
    });
    expect(subscribed).toBe(0);
  });

  it("hands the end and a failure to the operator once it is engaged", () => {
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("x-a|").pipe(engageFrom(isX, pipe(upper, endWith("end"))))).toBe("X-A(e|)", { X: "X", A: "A", e: "end" });
      const recovered = pipe(
        upper,
        catchError((error: string) => of(`caught ${error}`)),
      );
      expectObservable(cold("ax-#", undefined, "boom").pipe(engageFrom(isX, recovered))).toBe("aX-(c|)", {
        a: "a",
        X: "X",
        c: "caught boom",
      });
      expectObservable(cold("a-#", undefined, "boom").pipe(engageFrom(isX, recovered))).toBe("a-#", undefined, "boom");
    });
  });

  it("leaves the source and the operator when the subscriber downstream leaves", () => {
    let finalized = 0;
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold("ax-b-c|");
      const watched = pipe(
        upper,
        finalize(() => finalized++),
      );
      expectObservable(source.pipe(inChain(engageFrom(isX, watched))), "^---!").toBe("aX-B");
      expectSubscriptions(source.subscriptions).toBe("^---!");
    });
    expect(finalized).toBe(1);
  });

  it("stops reading a synchronous source once the subscriber left", () => {
    const { source, sent } = synchronousSource(["a", "x", "b", "c", "d"]);
    const seen: string[] = [];
    source.pipe(engageFrom(isX, upper), take(3)).subscribe((item) => seen.push(item));
    expect(seen).toEqual(["a", "X", "B"]);
    expect(sent).toEqual(["a", "x", "b"]);
  });

  describe("of emitEach stages alone (emitEach, pipeStages)", () => {
    /** Each item with this stage's count of items so far; the count is made once per subscription, when the stage is. */
    const numbering = (made: string[], name: string) =>
      emitEachPer(() => {
        made.push(name);
        let count = 0;
        return (item: string) => `${item}${name}${count++}`;
      });

    it("pass items around the stages until the first that engages them, and make the stages only then", () => {
      const made: string[] = [];
      marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
        const source = cold("ab-x-c|");
        const stages = pipeStages(
          numbering(made, "n"),
          emitEach((item: string) => item.toUpperCase()),
        );
        expectObservable(source.pipe(engageFrom(isX, stages))).toBe("ab-y-z|", { a: "a", b: "b", y: "XN0", z: "CN1" });
        expectSubscriptions(source.subscriptions).toBe("^-----!");
      });
      expect(made).toEqual(["n"]);
    });

    it("make nothing, and pass the end around, when no item engages them", () => {
      const made: string[] = [];
      marbles().run(({ cold, expectObservable }) => {
        expectObservable(cold("ab|").pipe(engageFrom(isX, numbering(made, "n")))).toBe("ab|");
        expectObservable(cold("ab#", undefined, "boom").pipe(engageFrom(isX, numbering(made, "n")))).toBe("ab#", undefined, "boom");
      });
      expect(made).toEqual([]);
    });

    it("run in one subscriber with the emitEach stages before and after them, each stage with its own state", () => {
      const made: string[] = [];
      let subscribed = 0;
      const counted = new Observable<string>((subscriber) => {
        subscribed++;
        for (const item of ["a", "x", "b"]) subscriber.next(item);
        subscriber.complete();
      });
      const seen: string[] = [];
      const subscribe = Observable.prototype.subscribe;
      let subscriptions = 0;
      Observable.prototype.subscribe = function (this: Observable<unknown>, ...args: Parameters<typeof subscribe>) {
        subscriptions++;
        return subscribe.apply(this, args);
      } as typeof subscribe;
      try {
        counted
          .pipe(
            numbering(made, "b"),
            engageFrom((item: string) => item.startsWith("x"), pipeStages(numbering(made, "g"), numbering(made, "h"))),
            numbering(made, "a"),
          )
          .subscribe((item) => seen.push(item));
      } finally {
        Observable.prototype.subscribe = subscribe;
      }
      // The piped stages' Observable, then the source: no subscriber in between.
      expect(subscriptions).toBe(2);
      expect(subscribed).toBe(1);
      expect(seen).toEqual(["ab0a0", "xb1g0h0a1", "bb2g1h1a2"]);
      expect(made).toEqual(["b", "a", "g", "h"]);
    });

    it("keep a gate inside a gate closed until an item engages it too", () => {
      marbles().run(({ cold, expectObservable }) => {
        const inner = engageFrom(
          (item: string) => item.startsWith("y"),
          emitEach((item: string) => item.toUpperCase()),
        );
        const outer = engageFrom(
          isX,
          pipe(
            emitEach((item: string) => `${item}!`),
            inner,
          ),
        );
        expectObservable(cold("axbyc|").pipe(outer)).toBe("abcde|", { a: "a", b: "x!", c: "b!", d: "Y!", e: "C!" });
      });
    });

    it("error the stream when the test of an item throws, and leave the source", () => {
      marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
        const source = cold("a-b-c|");
        const engages = (item: string) => {
          if (item === "b") throw new Error("bad");
          return false;
        };
        expectObservable(
          source.pipe(
            engageFrom(
              engages,
              emitEach((item: string) => item),
            ),
          ),
        ).toBe("a-#", undefined, new Error("bad"));
        expectSubscriptions(source.subscriptions).toBe("^-!");
      });
    });

    it("stop reading a synchronous source once the subscriber left", () => {
      const { source, sent } = synchronousSource(["a", "x", "b", "c", "d"]);
      const seen: string[] = [];
      source
        .pipe(
          engageFrom(
            isX,
            emitEach((item: string) => item.toUpperCase()),
          ),
          take(3),
        )
        .subscribe((item) => seen.push(item));
      expect(seen).toEqual(["a", "X", "B"]);
      expect(sent).toEqual(["a", "x", "b"]);
    });
  });
});
