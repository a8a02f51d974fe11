import { describe, expect, it } from "@jest/globals";
import { config, of, take } from "rxjs";
import { continueAfterDrop } from "../../operators/continue-after-drop.js";
import { inChain, marbles, synchronousSource } from "../support/marbles.js";

describe("continueAfterDrop", () => {
  it("goes on with the re-attached stream when the source ends early", () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold("-a-b|");
      const reattached = cold("-c-d|");
      expectObservable(source.pipe(continueAfterDrop(() => reattached))).toBe("-a-b-c-d|");
      expectSubscriptions(source.subscriptions).toBe("^---!");
      expectSubscriptions(reattached.subscriptions).toBe("----^---!");
    });
  });

  it("re-attaches after a failure too, and gives up after the allowed attempts", () => {
    let calls = 0;
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold("-a#");
      const reattached = cold("-c#", undefined, new Error("still down"));
      const reattach = () => (calls++, reattached);
      expectObservable(source.pipe(continueAfterDrop(reattach, 1))).toBe("-a-c#", undefined, new Error("still down"));
      expectSubscriptions(source.subscriptions).toBe("^-!");
      expectSubscriptions(reattached.subscriptions).toBe("--^-!");
    });
    expect(calls).toBe(1);
  });

  it("does nothing when the subscriber leaves first, as a finished run does", () => {
    let calls = 0;
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold("-a-b|");
      expectObservable(source.pipe(continueAfterDrop(() => (calls++, cold("-c|")))), "^-!").toBe("-a");
      expectSubscriptions(source.subscriptions).toBe("^-!");
    });
    expect(calls).toBe(0);
  });

  it("re-attaches when the source ends synchronously, during its own subscription, and leaves the re-attached stream with the subscriber", () => {
    const unhandled: unknown[] = [];
    const previous = config.onUnhandledError;
    config.onUnhandledError = (error) => unhandled.push(error);
    try {
      marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
        const reattached = cold("----c---d|");
        expectObservable(of("a", "b").pipe(continueAfterDrop(() => reattached)), "^-----!").toBe("(ab)c");
        expectSubscriptions(reattached.subscriptions).toBe("^-----!");
      });
    } finally {
      config.onUnhandledError = previous;
    }
    expect(unhandled).toEqual([]);
  });

  it("should not break unsubscription chain when unsubscribed explicitly", () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold("-a-b|");
      const reattached = cold("-c-d-e|");
      expectObservable(source.pipe(inChain(continueAfterDrop(() => reattached))), "^-----!").toBe("-a-b-c");
      expectSubscriptions(source.subscriptions).toBe("^---!");
      expectSubscriptions(reattached.subscriptions).toBe("----^-!");
    });
  });

  it("stops a synchronous re-attached stream when the subscriber leaves during it", () => {
    const dropping = synchronousSource([1, 2]);
    const reattached = synchronousSource([3, 4, 5], { complete: false });
    const taken: number[] = [];
    dropping.source
      .pipe(
        continueAfterDrop(() => reattached.source),
        take(3),
      )
      .subscribe((item) => taken.push(item));
    expect(taken).toEqual([1, 2, 3]);
    expect(reattached.sent).toEqual([3]);
  });
});
