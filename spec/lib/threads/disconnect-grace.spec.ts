import { afterEach, beforeEach, describe, expect, it, jest } from "@jest/globals";
import { LocalDisconnectGrace } from "../../../lib/threads/disconnect-grace.js";

describe("DisconnectGrace", () => {
  beforeEach(() => {
    jest.useFakeTimers();
  });
  afterEach(() => {
    jest.useRealTimers();
  });
  const held = (expire: () => void, executionId = "e1") => ({ threadId: "t1", executionId, taskId: `task-${executionId}`, expire });

  it("expires a held execution when the window runs out", () => {
    const grace = new LocalDisconnectGrace(5_000);
    const expire = jest.fn();
    grace.hold(held(expire));
    jest.advanceTimersByTime(4_999);
    expect(expire).not.toHaveBeenCalled();
    jest.advanceTimersByTime(1);
    expect(expire).toHaveBeenCalledTimes(1);
    expect(grace.size).toBe(0);
  });

  it("waits while an observer watches, ends the wait when it saw the task settle, and re-arms when it left early", () => {
    const grace = new LocalDisconnectGrace(1_000);
    const expire = jest.fn();
    grace.hold(held(expire));
    expect(grace.claim("e1")).toBe(true);
    jest.advanceTimersByTime(10_000);
    expect(expire).not.toHaveBeenCalled();
    grace.unclaim("e1", false);
    jest.advanceTimersByTime(1_000);
    expect(expire).toHaveBeenCalledTimes(1);

    const other = jest.fn();
    grace.hold(held(other, "e2"));
    grace.claim("e2");
    grace.unclaim("e2", true);
    jest.advanceTimersByTime(10_000);
    expect(other).not.toHaveBeenCalled();
    expect(grace.claim("e2")).toBe(false);
  });

  it("gives up at once on a new turn of the thread", () => {
    const grace = new LocalDisconnectGrace(60_000);
    const expire = jest.fn();
    grace.hold(held(expire));
    grace.expireThread("t1");
    expect(expire).toHaveBeenCalledTimes(1);
    jest.advanceTimersByTime(60_000);
    expect(expire).toHaveBeenCalledTimes(1);
  });

  it("is off at 0: nothing is held", () => {
    expect(new LocalDisconnectGrace(0).enabled).toBe(false);
  });
});
