import { describe, it } from "@jest/globals";
import { HEARTBEAT, mergeHeartbeat } from "../../operators/merge-heartbeat.js";
import { marbles } from "../support/marbles.js";

describe("mergeHeartbeat", () => {
  it("beats after each quiet period of 15 s and again while the quiet lasts", () => {
    marbles().run(({ cold, expectObservable }) => {
      const source = cold("a 40s b|");
      expectObservable(source.pipe(mergeHeartbeat(15_000))).toBe("a 14999ms h 14999ms h 10000ms b|", { a: "a", b: "b", h: HEARTBEAT });
    });
  });

  it("re-arms on every item, so a busy stream never beats", () => {
    marbles().run(({ cold, expectObservable }) => {
      const source = cold("a 10s b 10s c|");
      expectObservable(source.pipe(mergeHeartbeat(15_000))).toBe("a 10s b 10s c|");
    });
  });

  it("stops beating when the stream ends or errors", () => {
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("a|").pipe(mergeHeartbeat(5))).toBe("a|");
      expectObservable(cold("a#").pipe(mergeHeartbeat(5))).toBe("a#");
    });
  });
});
