import { describe, expect, it } from "@jest/globals";
import type { RunItem } from "../../lib/model/kernel-signal.js";
import { aggregateUsage, sumUsage } from "../../operators/aggregate-usage.js";
import { marbles } from "../support/marbles.js";

const usage = (provider: string, inputTokens: number): RunItem => ({
  kind: "usage",
  usage: { provider, model: "m", inputTokens, outputTokens: 1, totalTokens: inputTokens + 1 },
});
const end: RunItem = { kind: "run-end", error: undefined, kernelSettled: true };

describe("aggregateUsage", () => {
  it("sums usage by provider and model onto the run end, and consumes the usage signals", () => {
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("abcd", { a: usage("p", 10), b: usage("q", 5), c: usage("p", 20), d: end }).pipe(aggregateUsage())).toBe(
        "---d",
        {
          d: {
            ...end,
            usage: [
              { provider: "p", model: "m", inputTokens: 30, outputTokens: 2, totalTokens: 32, cachedInputTokens: 0 },
              { provider: "q", model: "m", inputTokens: 5, outputTokens: 1, totalTokens: 6, cachedInputTokens: 0 },
            ],
          },
        },
      );
    });
  });

  it("leaves the run end without usage when the kernel reported none", () => {
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("d", { d: end }).pipe(aggregateUsage())).toBe("d", { d: end });
    });
    expect(sumUsage([])).toBeUndefined();
  });
});
