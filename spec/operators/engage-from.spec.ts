import { describe, expect, it } from "@jest/globals";
import { catchError, endWith, finalize, map, of, pipe, take, type MonoTypeOperatorFunction } from "rxjs";
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
});
