/**
 * `OutputBudget`: a token bucket over a kernel's output lines, on a clock
 * the test moves; the lines it refuses are told as one count before the
 * next line it lets through, or when flushed.
 */
import { describe, expect, it } from "@jest/globals";
import { OutputBudget } from "../../../lib/kernel-process/output-budget.js";

describe("OutputBudget", () => {
  const budgetAt = (options: { perSecond: number; burst: number }) => {
    let now = 0;
    const told: number[] = [];
    const budget = new OutputBudget((dropped) => told.push(dropped), { ...options, now: () => now });
    const take = (lines: number) => Array.from({ length: lines }, () => budget.take()).filter(Boolean).length;
    return { budget, told, take, advance: (ms: number) => (now += ms) };
  };

  it("lets the burst through, then the rate, and tells what it left out before the next line it lets through", () => {
    const { told, take, advance } = budgetAt({ perSecond: 10, burst: 5 });
    expect(take(8)).toBe(5);
    expect(told).toEqual([]);
    advance(200);
    expect(take(4)).toBe(2);
    expect(told).toEqual([3]);
    advance(1000);
    expect(take(100)).toBe(5);
    expect(told).toEqual([3, 2]);
  });

  it("tells the count when flushed, once", () => {
    const { budget, told, take } = budgetAt({ perSecond: 1, burst: 1 });
    expect(take(4)).toBe(1);
    budget.flush();
    budget.flush();
    expect(told).toEqual([3]);
  });
});
