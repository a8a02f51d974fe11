import { describe, expect, it } from "@jest/globals";
import { take } from "rxjs";
import type { RunItem } from "../../lib/model/kernel-signal.js";
import { aggregateUsage, sumUsage } from "../../operators/aggregate-usage.js";
import { inChain, marbles, synchronousSource } from "../support/marbles.js";

const usage = (provider: string, inputTokens: number): RunItem => ({
  kind: "usage",
  usage: { provider, model: "m", inputTokens, outputTokens: 1, totalTokens: inputTokens + 1 },
});
const end: RunItem = { kind: "run-end", error: undefined, kernelSettled: true };

describe("aggregateUsage", () => {
  it("sums usage by provider and model onto the run end, and consumes the usage signals", () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const items = cold("abcd|", { a: usage("p", 10), b: usage("q", 5), c: usage("p", 20), d: end });
      expectObservable(items.pipe(aggregateUsage())).toBe("---d|", {
        d: {
          ...end,
          usage: [
            { provider: "p", model: "m", inputTokens: 30, outputTokens: 2, totalTokens: 32, cachedInputTokens: 0 },
            { provider: "q", model: "m", inputTokens: 5, outputTokens: 1, totalTokens: 6, cachedInputTokens: 0 },
          ],
        },
      });
      expectSubscriptions(items.subscriptions).toBe("^---!");
    });
  });

  it("leaves the run end without usage when the kernel reported none", () => {
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("d", { d: end }).pipe(aggregateUsage())).toBe("d", { d: end });
    });
    expect(sumUsage([])).toBeUndefined();
  });
});

describe("aggregateUsage and its subscription", () => {
  it("should not break unsubscription chain when unsubscribed explicitly", () => {
    const working: RunItem = { kind: "task-state", state: "working" };
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const items = cold("a-b-c-d|", { a: working, b: usage("p", 10), c: working, d: end });
      expectObservable(items.pipe(inChain(aggregateUsage())), "^--!").toBe("a", { a: working });
      expectSubscriptions(items.subscriptions).toBe("^--!");
    });
  });

  it("sums a synchronous source, and stops it when the subscriber leaves", () => {
    const whole = synchronousSource([usage("p", 10), usage("p", 20), end]);
    const seen: RunItem[] = [];
    whole.source.pipe(aggregateUsage()).subscribe((item) => seen.push(item));
    expect(seen).toEqual([
      { ...end, usage: [{ provider: "p", model: "m", inputTokens: 30, outputTokens: 2, totalTokens: 32, cachedInputTokens: 0 }] },
    ]);

    const { source, sent } = synchronousSource([usage("p", 10), end, usage("p", 20), end]);
    source.pipe(aggregateUsage(), take(1)).subscribe();
    expect(sent).toEqual([usage("p", 10), end]);
  });
});
