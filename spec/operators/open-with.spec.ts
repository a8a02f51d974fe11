import { describe, expect, it } from "@jest/globals";
import { take } from "rxjs";
import { openWith } from "../../operators/open-with.js";
import { inChain, marbles, synchronousSource } from "../support/marbles.js";

describe("openWith", () => {
  it("emits the opening at subscription, then the source's items, end and error as they come", () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const items = cold("----a-b|");
      expectObservable(items.pipe(openWith(["s", "t"]))).toBe("(st)a-b|");
      expectSubscriptions(items.subscriptions).toBe("^------!");

      const failing = cold("-a-#", undefined, new Error("cut"));
      expectObservable(failing.pipe(openWith(["s"]))).toBe("sa-#", undefined, new Error("cut"));
      expectSubscriptions(failing.subscriptions).toBe("^--!");
    });
  });

  it("leaves the source with the subscriber, in a chain too", () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const items = cold("-a-b-c|");
      expectObservable(items.pipe(inChain(openWith(["s"]))), "^--!").toBe("sa-");
      expectSubscriptions(items.subscriptions).toBe("^--!");
    });
  });

  it("never subscribes to the source when the subscriber left on the opening", () => {
    const { source, sent } = synchronousSource(["a", "b"]);
    const seen: string[] = [];
    source.pipe(openWith(["s", "t"]), take(1)).subscribe((item) => seen.push(item));
    expect(seen).toEqual(["s"]);
    expect(sent).toEqual([]);
  });

  it("stops a synchronous source when the subscriber leaves in the middle of it", () => {
    const { source, sent } = synchronousSource(["a", "b", "c", "d"]);
    const seen: string[] = [];
    source.pipe(openWith(["s"]), take(3)).subscribe((item) => seen.push(item));
    expect(seen).toEqual(["s", "a", "b"]);
    expect(sent).toEqual(["a", "b"]);
  });
});
