import { describe, expect, it } from "@jest/globals";
import { Subject, type SchedulerLike } from "rxjs";
import { HEARTBEAT, mergeHeartbeat } from "../../operators/merge-heartbeat.js";
import { marbles } from "../support/marbles.js";

describe("mergeHeartbeat", () => {
  it("beats after each quiet period of 15 s and again while the quiet lasts", () => {
    marbles().run(({ cold, expectObservable }) => {
      const source = cold("a 40s b|");
      expectObservable(source.pipe(mergeHeartbeat(15_000))).toBe("a 14999ms h 14999ms h 10000ms b|", { a: "a", b: "b", h: HEARTBEAT });
    });
  });

  it("beats when the stream is quiet from the start", () => {
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("31s a|").pipe(mergeHeartbeat(15_000))).toBe("15s h 14999ms h 999ms a|", { a: "a", h: HEARTBEAT });
    });
  });

  it("restarts the quiet period on every item, so a busy stream never beats", () => {
    marbles().run(({ cold, expectObservable }) => {
      const source = cold("a 10s b 10s c|");
      expectObservable(source.pipe(mergeHeartbeat(15_000))).toBe("a 10s b 10s c|");
    });
  });

  it("beats a full period after the last item, not on the timer's original schedule", () => {
    marbles().run(({ cold, expectObservable }) => {
      const source = cold("a 10s b 20s c|");
      expectObservable(source.pipe(mergeHeartbeat(15_000))).toBe("a 10s b 14999ms h 5000ms c|", { a: "a", b: "b", c: "c", h: HEARTBEAT });
    });
  });

  it("stops beating when the stream ends or errors", () => {
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("a|").pipe(mergeHeartbeat(5))).toBe("a|");
      expectObservable(cold("a#").pipe(mergeHeartbeat(5))).toBe("a#");
    });
  });

  it("stops beating when the subscriber leaves", () => {
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("a 40s b|").pipe(mergeHeartbeat(15_000)), "^ 20s !").toBe("a 14999ms h", { a: "a", h: HEARTBEAT });
    });
  });

  it("asks the scheduler for one timer per subscription, however many items pass", () => {
    const scheduler = marbles();
    let timers = 0;
    const counting: SchedulerLike = {
      now: () => scheduler.now(),
      schedule: (...args: Parameters<SchedulerLike["schedule"]>) => {
        timers++;
        return scheduler.schedule(...args);
      },
    };
    const source = new Subject<number>();
    const seen: unknown[] = [];
    const subscription = source.pipe(mergeHeartbeat(15_000, counting)).subscribe((item) => seen.push(item));
    for (let i = 0; i < 1000; i++) source.next(i);
    subscription.unsubscribe();
    expect(seen).toHaveLength(1000);
    expect(timers).toBe(1);
  });
});
