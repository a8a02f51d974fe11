import { describe, expect, it } from "@jest/globals";
import { Observable, take } from "rxjs";
import { onAbandon } from "../../operators/on-abandon.js";
import { inChain, marbles, synchronousSource } from "../support/marbles.js";

describe("onAbandon", () => {
  it("reports a subscriber that leaves before the end", () => {
    let abandoned = 0;
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold("a-b-c|");
      expectObservable(source.pipe(onAbandon(() => abandoned++)), "^--!").toBe("a-b");
      expectSubscriptions(source.subscriptions).toBe("^--!");
    });
    expect(abandoned).toBe(1);
  });

  it("stays quiet after a normal end or an error", () => {
    let abandoned = 0;
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const ending = cold("a|");
      expectObservable(ending.pipe(onAbandon(() => abandoned++))).toBe("a|");
      expectSubscriptions(ending.subscriptions).toBe("^!");
      const failing = cold("a#");
      expectObservable(failing.pipe(onAbandon(() => abandoned++))).toBe("a#");
      expectSubscriptions(failing.subscriptions).toBe("^!");
    });
    expect(abandoned).toBe(0);
  });

  it("reports only once the source was left", () => {
    const log: string[] = [];
    const source = new Observable<string>(() => () => log.push("source left"));
    source
      .pipe(onAbandon(() => log.push("abandoned")))
      .subscribe()
      .unsubscribe();
    expect(log).toEqual(["source left", "abandoned"]);
  });

  it("should not break unsubscription chain when unsubscribed explicitly", () => {
    let abandoned = 0;
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold("a-b-c-d|");
      expectObservable(source.pipe(inChain(onAbandon(() => abandoned++))), "^--!").toBe("a-b");
      expectSubscriptions(source.subscriptions).toBe("^--!");
    });
    expect(abandoned).toBe(1);
  });

  it("stops a synchronous source whose subscriber leaves during it, and reports that; stays quiet when it ends", () => {
    let abandoned = 0;
    const { source, sent } = synchronousSource([1, 2, 3]);
    source
      .pipe(
        onAbandon(() => abandoned++),
        take(1),
      )
      .subscribe();
    expect(sent).toEqual([1]);
    expect(abandoned).toBe(1);

    const ending = synchronousSource([1, 2]);
    const seen: number[] = [];
    ending.source.pipe(onAbandon(() => abandoned++)).subscribe((item) => seen.push(item));
    expect(seen).toEqual([1, 2]);
    expect(abandoned).toBe(1);
  });
});
