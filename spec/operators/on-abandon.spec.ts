import { describe, expect, it } from "@jest/globals";
import { onAbandon } from "../../operators/on-abandon.js";
import { marbles } from "../support/marbles.js";

describe("onAbandon", () => {
  it("reports a subscriber that leaves before the end", () => {
    let abandoned = 0;
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("a-b-c|").pipe(onAbandon(() => abandoned++)), "^--!").toBe("a-b");
    });
    expect(abandoned).toBe(1);
  });

  it("stays quiet after a normal end or an error", () => {
    let abandoned = 0;
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("a|").pipe(onAbandon(() => abandoned++))).toBe("a|");
      expectObservable(cold("a#").pipe(onAbandon(() => abandoned++))).toBe("a#");
    });
    expect(abandoned).toBe(0);
  });
});
