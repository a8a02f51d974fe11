import { afterEach, beforeEach, describe, expect, it, jest } from "@jest/globals";
import { LeavingRuns, STOP_RESEND_WAIT_MS } from "../../../lib/runs/leaving-runs.js";

describe("LeavingRuns", () => {
  beforeEach(() => {
    jest.useFakeTimers();
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  const deferred = () => {
    let resolve!: () => void;
    const promise = new Promise<void>((done) => (resolve = done));
    return { promise, resolve };
  };

  it("answers false at once for a thread whose run is not leaving", async () => {
    await expect(new LeavingRuns().waitFor("t")).resolves.toBe(false);
  });

  it("waits for a leaving run to let its thread go, and forgets it then", async () => {
    const runs = new LeavingRuns();
    const released = deferred();
    runs.add("t", released.promise);
    const waited = runs.waitFor("t");
    released.resolve();
    await expect(waited).resolves.toBe(true);
    expect(runs.size).toBe(0);
    await expect(runs.waitFor("t")).resolves.toBe(false);
  });

  it("waits no longer than the bound", async () => {
    const runs = new LeavingRuns();
    runs.add("t", deferred().promise);
    const waited = runs.waitFor("t");
    await jest.advanceTimersByTimeAsync(STOP_RESEND_WAIT_MS - 1);
    let settled = false;
    void waited.then(() => (settled = true));
    await Promise.resolve();
    expect(settled).toBe(false);
    await jest.advanceTimersByTimeAsync(1);
    await expect(waited).resolves.toBe(false);
    expect(jest.getTimerCount()).toBe(0);
  });

  it("keeps a later run's leaving when an earlier one's release comes after it", async () => {
    const runs = new LeavingRuns();
    const first = deferred();
    const second = deferred();
    runs.add("t", first.promise);
    runs.add("t", second.promise);
    first.resolve();
    await Promise.resolve();
    await Promise.resolve();
    expect(runs.size).toBe(1);
    second.resolve();
    await expect(runs.waitFor("t")).resolves.toBe(true);
  });
});
