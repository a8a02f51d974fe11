import { describe, expect, it } from "@jest/globals";
import { config, Subject, take, type ObservableNotification, type SchedulerLike } from "rxjs";
import type { RunHelpers } from "rxjs/testing";
import { HEARTBEAT, mergeHeartbeat } from "../../operators/merge-heartbeat.js";
import { inChain, marbles, synchronousSource } from "../support/marbles.js";

/**
 * Runs `body` in marbles that stop at `frames` (ms), then checks that the
 * heartbeat's timer is gone: nothing was sent to a subscriber after it had
 * stopped (the beats of a leaked timer, which the subscriber itself no
 * longer shows) and no timer is still scheduled. Without the bound, a
 * leaked timer would run the flush forever and hang the spec instead of
 * failing it.
 */
function watchFor(frames: number, body: (helpers: RunHelpers) => void): void {
  const scheduler = marbles();
  const late: ObservableNotification<unknown>[] = [];
  const previous = config.onStoppedNotification;
  config.onStoppedNotification = (notification) => late.push(notification);
  try {
    scheduler.run((helpers) => {
      scheduler.maxFrames = frames;
      body(helpers);
    });
  } finally {
    config.onStoppedNotification = previous;
  }
  expect(late).toEqual([]);
  expect(scheduler.actions).toEqual([]);
}

/** Long enough after every stream below for a leaked 15 s timer to beat more than once. */
const WATCH = 100_000;

describe("mergeHeartbeat", () => {
  it("beats after each quiet period of 15 s and again while the quiet lasts", () => {
    watchFor(WATCH, ({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold("a 40s b|");
      expectObservable(source.pipe(mergeHeartbeat(15_000))).toBe("a 14999ms h 14999ms h 10000ms b|", { a: "a", b: "b", h: HEARTBEAT });
      expectSubscriptions(source.subscriptions).toBe("^ 40001ms !");
    });
  });

  it("beats when the stream is quiet from the start", () => {
    watchFor(WATCH, ({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold("31s a|");
      expectObservable(source.pipe(mergeHeartbeat(15_000))).toBe("15s h 14999ms h 999ms a|", { a: "a", h: HEARTBEAT });
      expectSubscriptions(source.subscriptions).toBe("^ 31s !");
    });
  });

  it("restarts the quiet period on every item, so a busy stream never beats", () => {
    watchFor(WATCH, ({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold("a 10s b 10s c|");
      expectObservable(source.pipe(mergeHeartbeat(15_000))).toBe("a 10s b 10s c|");
      expectSubscriptions(source.subscriptions).toBe("^ 20002ms !");
    });
  });

  it("beats a full period after the last item, not on the timer's original schedule", () => {
    watchFor(WATCH, ({ cold, expectObservable }) => {
      const source = cold("a 10s b 20s c|");
      expectObservable(source.pipe(mergeHeartbeat(15_000))).toBe("a 10s b 14999ms h 5000ms c|", { a: "a", b: "b", c: "c", h: HEARTBEAT });
    });
  });

  it("stops beating when the stream ends or errors", () => {
    // Beats every 5 ms, watched for 100 ms: a timer left running after the end would beat some 18 times.
    watchFor(100, ({ cold, expectObservable, expectSubscriptions }) => {
      const ending = cold("a 9ms |");
      expectObservable(ending.pipe(mergeHeartbeat(5))).toBe("a 4ms h 4ms |", { a: "a", h: HEARTBEAT });
      expectSubscriptions(ending.subscriptions).toBe("^ 9ms !");
      const failing = cold("a 9ms #");
      expectObservable(failing.pipe(mergeHeartbeat(5))).toBe("a 4ms h 4ms #", { a: "a", h: HEARTBEAT });
      expectSubscriptions(failing.subscriptions).toBe("^ 9ms !");
    });
  });

  it("stops beating when the subscriber leaves", () => {
    watchFor(WATCH, ({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold("a 40s b|");
      expectObservable(source.pipe(mergeHeartbeat(15_000)), "^ 20s !").toBe("a 14999ms h", { a: "a", h: HEARTBEAT });
      expectSubscriptions(source.subscriptions).toBe("^ 20s !");
    });
  });

  it("should not break unsubscription chain when unsubscribed explicitly", () => {
    watchFor(WATCH, ({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold("a 40s b|");
      expectObservable(source.pipe(inChain(mergeHeartbeat(15_000))), "^ 20s !").toBe("a 14999ms h", { a: "a", h: HEARTBEAT });
      expectSubscriptions(source.subscriptions).toBe("^ 20s !");
    });
  });

  it("releases its timer when a synchronous source ends during the subscription, or the subscriber leaves during it", () => {
    const scheduler = marbles();
    const ended: unknown[] = [];
    synchronousSource(["a", "b"])
      .source.pipe(mergeHeartbeat(5, scheduler))
      .subscribe((item) => ended.push(item));
    expect(ended).toEqual(["a", "b"]);
    expect(scheduler.actions).toEqual([]);

    const { source, sent } = synchronousSource(["a", "b", "c"], { complete: false });
    source.pipe(mergeHeartbeat(5, scheduler), take(2)).subscribe();
    expect(sent).toEqual(["a", "b"]);
    expect(scheduler.actions).toEqual([]);
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
