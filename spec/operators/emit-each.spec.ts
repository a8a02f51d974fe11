import { describe, expect, it } from "@jest/globals";
import { take } from "rxjs";
import { emitEach, emitEachPer } from "../../operators/emit-each.js";
import { inChain, marbles, synchronousSource } from "../support/marbles.js";

describe("emitEach", () => {
  it("emits each item's array in order, in the same frame, and nothing for an empty one", () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const items = cold("a---b-|");
      const project = (item: string) => (item === "a" ? ["x", "y"] : []);
      expectObservable(items.pipe(emitEach(project))).toBe("(xy)--|", { x: "x", y: "y" });
      expectSubscriptions(items.subscriptions).toBe("^-----!");
    });
  });

  it("emits an item returned alone, not in an array, as it is", () => {
    marbles().run(({ cold, expectObservable }) => {
      const items = cold("a---b-c|");
      const kept = { id: "b" };
      const project = (item: string) => (item === "a" ? ["x", "y"] : item === "b" ? kept : []);
      expectObservable(items.pipe(emitEach<string, unknown>(project))).toBe("(xy)k--|", { x: "x", y: "y", k: kept });
    });
  });

  it("passes the item's index and errors the stream when the projection throws", () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const items = cold("ab-c|");
      const project = (_item: string, index: number) => {
        if (index === 1) throw new Error("bad");
        return [index];
      };
      expectObservable(items.pipe(emitEach(project))).toBe("a#", { a: 0 }, new Error("bad"));
      expectSubscriptions(items.subscriptions).toBe("^!");
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
      expectSubscriptions(broken.subscriptions).toBe("^---!");
    });
  });

  it("should not break unsubscription chain when unsubscribed explicitly", () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const items = cold("a---b---c---d|");
      expectObservable(items.pipe(inChain(emitEach((item: string) => [item, item.toUpperCase()]))), "^-----!").toBe("(aA)(bB)", {
        a: "a",
        A: "A",
        b: "b",
        B: "B",
      });
      expectSubscriptions(items.subscriptions).toBe("^-----!");
    });
  });

  it("reads a synchronous source to its end, and stops it when the subscriber leaves in the middle of an item's array", () => {
    const whole = synchronousSource(["a", "b"]);
    const all: string[] = [];
    let completed = false;
    whole.source.pipe(emitEach((item: string) => [item, item.toUpperCase()])).subscribe({
      next: (item) => all.push(item),
      complete: () => (completed = true),
    });
    expect(all).toEqual(["a", "A", "b", "B"]);
    expect(completed).toBe(true);

    const { source, sent } = synchronousSource(["a", "b", "c", "d"]);
    const taken: string[] = [];
    source
      .pipe(
        emitEach((item: string) => [item, item.toUpperCase()]),
        take(3),
      )
      .subscribe((item) => taken.push(item));
    expect(taken).toEqual(["a", "A", "b"]);
    expect(sent).toEqual(["a", "b"]);
  });

  describe("consecutive stages", () => {
    it("run each item through both projections in order, each stage with its own index", () => {
      const seen: string[] = [];
      const first = (item: string, index: number) => {
        seen.push(`1:${item}${index}`);
        return item === "b" ? [] : [item, item.toUpperCase()];
      };
      const second = (item: string, index: number) => {
        seen.push(`2:${item}${index}`);
        return `${item}${index}`;
      };
      marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
        const items = cold("a---b---c---|");
        expectObservable(items.pipe(emitEach(first), emitEach(second))).toBe("(xy)----(zw)|", { x: "a0", y: "A1", z: "c2", w: "C3" });
        expectSubscriptions(items.subscriptions).toBe("^-----------!");
      });
      expect(seen).toEqual(["1:a0", "2:a0", "2:A1", "1:b1", "1:c2", "2:c2", "2:C3"]);
    });

    it("make each stage's projection once per subscription, so two subscriptions share no state", () => {
      let made = 0;
      const counting = emitEachPer(() => {
        made++;
        let count = 0;
        return (item: string) => `${item}${count++}`;
      });
      const stages = emitEachPer(() => (item: string) => [item, item]);
      marbles().run(({ cold, expectObservable }) => {
        const items = cold("a---b---|");
        const piped = items.pipe(stages, counting);
        expectObservable(piped).toBe("(wx)(yz)|", { w: "a0", x: "a1", y: "b2", z: "b3" });
        expectObservable(piped).toBe("(wx)(yz)|", { w: "a0", x: "a1", y: "b2", z: "b3" });
      });
      expect(made).toBe(2);
    });

    it("stop at a later stage's error: the rest of an earlier stage's array is not projected", () => {
      const projected: string[] = [];
      marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
        const items = cold("a-b|");
        const failing = (item: string) => {
          projected.push(item);
          if (item === "y") throw new Error("bad");
          return item;
        };
        expectObservable(
          items.pipe(
            emitEach((_item: string) => ["x", "y", "z"]),
            emitEach(failing),
          ),
        ).toBe("(x#)", undefined, new Error("bad"));
        expectSubscriptions(items.subscriptions).toBe("(^!)");
      });
      expect(projected).toEqual(["x", "y"]);
    });

    it("stop a synchronous source, and project nothing more, when the subscriber leaves in the middle of an array", () => {
      const { source, sent } = synchronousSource(["a", "b", "c"]);
      const projected: string[] = [];
      const taken: string[] = [];
      source
        .pipe(
          emitEach((item: string) => [item, item.toUpperCase()]),
          emitEach((item: string) => {
            projected.push(item);
            return item;
          }),
          take(3),
        )
        .subscribe((item) => taken.push(item));
      expect(taken).toEqual(["a", "A", "b"]);
      expect(projected).toEqual(["a", "A", "b"]);
      expect(sent).toEqual(["a", "b"]);
    });

    it("leave the first stage usable on its own", () => {
      marbles().run(({ cold, expectObservable }) => {
        const first = cold("a---|").pipe(emitEach((item: string) => [item, item]));
        const both = first.pipe(emitEach((item: string) => item.toUpperCase()));
        expectObservable(first).toBe("(aa)|");
        expectObservable(both).toBe("(AA)|");
      });
    });
  });
});
