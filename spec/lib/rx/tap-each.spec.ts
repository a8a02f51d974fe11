import { describe, expect, it } from "@jest/globals";
import { tapEach } from "../../../lib/rx/tap-each.js";
import { marbles } from "../../support/marbles.js";

describe("tapEach", () => {
  it("shows each item to its handler before passing it on; the end and errors pass unchanged", () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions, flush }) => {
      const seen: string[] = [];
      const ending = cold("a-b|");
      expectObservable(ending.pipe(tapEach((item) => seen.push(item)))).toBe("a-b|");
      expectSubscriptions(ending.subscriptions).toBe("^--!");
      const failing = cold("a-#");
      expectObservable(failing.pipe(tapEach(() => {}))).toBe("a-#");
      flush();
      expect(seen).toEqual(["a", "b"]);
    });
  });

  it("errors the stream with what the handler throws, and leaves the source", () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold("a-b-c|");
      const failOnB = tapEach((item: string) => {
        if (item === "b") throw new Error("bad");
      });
      expectObservable(source.pipe(failOnB)).toBe("a-#", undefined, new Error("bad"));
      expectSubscriptions(source.subscriptions).toBe("^-!");
    });
  });

  it("leaves the source when the subscriber leaves", () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold("a-b-c-d|");
      expectObservable(source.pipe(tapEach(() => {})), "^--!").toBe("a-b");
      expectSubscriptions(source.subscriptions).toBe("^--!");
    });
  });
});
