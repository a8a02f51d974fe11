import { describe, it } from "@jest/globals";
import { emitEach } from "../../operators/emit-each.js";
import { marbles } from "../support/marbles.js";

describe("emitEach", () => {
  it("emits each item's array in order, in the same frame, and nothing for an empty one", () => {
    marbles().run(({ cold, expectObservable }) => {
      const project = (item: string) => (item === "a" ? ["x", "y"] : []);
      expectObservable(cold("a---b-|").pipe(emitEach(project))).toBe("(xy)--|", { x: "x", y: "y" });
    });
  });

  it("passes the item's index and errors the stream when the projection throws", () => {
    marbles().run(({ cold, expectObservable }) => {
      const project = (_item: string, index: number) => {
        if (index === 1) throw new Error("bad");
        return [index];
      };
      expectObservable(cold("ab-c|").pipe(emitEach(project))).toBe("a#", { a: 0 }, new Error("bad"));
    });
  });

  it("leaves its source when the subscriber leaves, and after an error, and passes the source's error on", () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const left = cold("a-b-c-d|");
      expectObservable(left.pipe(emitEach((item: string) => [item])), "^--!").toBe("a-b");
      expectSubscriptions(left.subscriptions).toBe("^--!");

      const failing = cold("a-b-c|");
      expectObservable(
        failing.pipe(
          emitEach((item: string) => {
            if (item === "b") throw new Error("bad");
            return [item];
          }),
        ),
      ).toBe("a-#", undefined, new Error("bad"));
      expectSubscriptions(failing.subscriptions).toBe("^-!");

      const broken = cold("a---#", undefined, new Error("cut"));
      expectObservable(broken.pipe(emitEach((item: string) => [item, item]))).toBe("(aa)#", undefined, new Error("cut"));
    });
  });
});
