import { describe, expect, it } from "@jest/globals";
import { take } from "rxjs";
import { EventType, type AGUIEvent } from "@ag-ui/core";
import { stampTime } from "../../operators/stamp-time.js";
import { inChain, marbles, synchronousSource } from "../support/marbles.js";

// Frozen: the operator stamps events in place, so a shared one must be copied, never changed.
const step: AGUIEvent = Object.freeze({ type: EventType.STEP_STARTED, stepName: "plan" });
const custom: AGUIEvent = Object.freeze({ type: EventType.CUSTOM, name: "c", value: 1 });
const clock = (...times: number[]) => {
  let next = 0;
  return () => times[Math.min(next++, times.length - 1)]!;
};

describe("stampTime", () => {
  it("stamps each event with the clock's time, read once per event, whole milliseconds", () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const events = cold<AGUIEvent>("a-b|", { a: step, b: custom });
      expectObservable(events.pipe(stampTime(clock(1_700_000_000_000.7, 1_700_000_000_042)))).toBe("a-b|", {
        a: { ...step, timestamp: 1_700_000_000_000 },
        b: { ...custom, timestamp: 1_700_000_000_042 },
      });
      expectSubscriptions(events.subscriptions).toBe("^--!");
    });
  });

  it("keeps a timestamp an event already has, and copies a frozen event rather than change it", () => {
    const stamped: AGUIEvent = { ...step, timestamp: 5 };
    const seen: AGUIEvent[] = [];
    synchronousSource([stamped, custom])
      .source.pipe(stampTime(clock(9)))
      .subscribe((event) => seen.push(event));
    expect(seen).toEqual([stamped, { ...custom, timestamp: 9 }]);
    expect(seen[0]).toBe(stamped);
    expect(custom).toEqual({ type: EventType.CUSTOM, name: "c", value: 1 });
  });

  it("stamps an event made for the run in place, without a copy", () => {
    const made: AGUIEvent = { type: EventType.TEXT_MESSAGE_CONTENT, messageId: "m", delta: "hi" };
    const seen: AGUIEvent[] = [];
    synchronousSource([made])
      .source.pipe(stampTime(clock(7)))
      .subscribe((event) => seen.push(event));
    expect(seen[0]).toBe(made);
    expect(made.timestamp).toBe(7);
  });
});

describe("stampTime and its subscription", () => {
  it("should not break unsubscription chain when unsubscribed explicitly", () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const events = cold<AGUIEvent>("a-b-c|", { a: step, b: custom, c: step });
      expectObservable(events.pipe(inChain(stampTime(() => 1))), "^-!").toBe("a", { a: { ...step, timestamp: 1 } });
      expectSubscriptions(events.subscriptions).toBe("^-!");
    });
  });

  it("stamps a synchronous source, and stops it when the subscriber leaves", () => {
    const seen: AGUIEvent[] = [];
    synchronousSource([step, custom])
      .source.pipe(stampTime(() => 3))
      .subscribe((event) => seen.push(event));
    expect(seen).toEqual([
      { ...step, timestamp: 3 },
      { ...custom, timestamp: 3 },
    ]);

    const { source, sent } = synchronousSource([step, custom, step]);
    source
      .pipe(
        stampTime(() => 3),
        take(1),
      )
      .subscribe();
    expect(sent).toEqual([step]);
  });
});
