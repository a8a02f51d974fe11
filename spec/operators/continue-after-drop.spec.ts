import { describe, expect, it } from "@jest/globals";
import { config, of } from "rxjs";
import { continueAfterDrop } from "../../operators/continue-after-drop.js";
import { marbles } from "../support/marbles.js";

describe("continueAfterDrop", () => {
  it("goes on with the re-attached stream when the source ends early", () => {
    marbles().run(({ cold, expectObservable }) => {
      const reattached = cold("-c-d|");
      expectObservable(cold("-a-b|").pipe(continueAfterDrop(() => reattached))).toBe("-a-b-c-d|");
    });
  });

  it("re-attaches after a failure too, and gives up after the allowed attempts", () => {
    let calls = 0;
    marbles().run(({ cold, expectObservable }) => {
      const reattach = () => (calls++, cold("-c#", undefined, new Error("still down")));
      expectObservable(cold("-a#").pipe(continueAfterDrop(reattach, 1))).toBe("-a-c#", undefined, new Error("still down"));
    });
    expect(calls).toBe(1);
  });

  it("does nothing when the subscriber leaves first, as a finished run does", () => {
    let calls = 0;
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("-a-b|").pipe(continueAfterDrop(() => (calls++, cold("-c|")))), "^-!").toBe("-a");
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
});
