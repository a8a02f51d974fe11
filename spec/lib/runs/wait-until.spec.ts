import { afterEach, describe, expect, it, jest } from "@jest/globals";
import { waitUntil } from "../../../lib/runs/wait-until.js";

/** Whether `promise` has settled, once the microtasks queued so far have run. */
async function isSettled(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void promise.then(() => (settled = true));
  await Promise.resolve();
  await Promise.resolve();
  return settled;
}

describe("waitUntil", () => {
  afterEach(() => {
    jest.useRealTimers();
  });

  it("resolves at once when the condition holds already, and leaves no check behind", async () => {
    const checks = new Set<() => void>();
    await waitUntil(() => true, checks, 60_000);
    expect(checks.size).toBe(0);
  });

  it("looks again at each check, and resolves at the first that finds it holding", async () => {
    jest.useFakeTimers();
    const checks = new Set<() => void>();
    let left = 2;
    const waiting = waitUntil(() => left === 0, checks, 60_000);
    const checkAll = () => [...checks].forEach((check) => check());
    left = 1;
    checkAll();
    expect(await isSettled(waiting)).toBe(false);
    left = 0;
    checkAll();
    expect(await isSettled(waiting)).toBe(true);
    expect(checks.size).toBe(0);
    expect(jest.getTimerCount()).toBe(0);
  });

  it("resolves after `ms` though the condition never holds", async () => {
    jest.useFakeTimers();
    const checks = new Set<() => void>();
    const waiting = waitUntil(() => false, checks, 5_000);
    jest.advanceTimersByTime(4_999);
    expect(await isSettled(waiting)).toBe(false);
    jest.advanceTimersByTime(1);
    expect(await isSettled(waiting)).toBe(true);
    expect(checks.size).toBe(0);
  });

  it("resolves when the function handed to `onEarlyEnd` is called, its timer cleared", async () => {
    jest.useFakeTimers();
    const checks = new Set<() => void>();
    let endNow: (() => void) | undefined;
    const waiting = waitUntil(
      () => false,
      checks,
      60_000,
      (end) => (endNow = end),
    );
    expect(await isSettled(waiting)).toBe(false);
    endNow!();
    expect(await isSettled(waiting)).toBe(true);
    expect(checks.size).toBe(0);
    expect(jest.getTimerCount()).toBe(0);
  });
});
