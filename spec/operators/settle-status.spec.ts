import { describe, expect, it } from "@jest/globals";
import { take } from "rxjs";
import { EventType, type AGUIEvent } from "@ag-ui/core";
import { HEARTBEAT } from "../../operators/merge-heartbeat.js";
import { settleStatus } from "../../operators/settle-status.js";
import { initialThreadStatus, reduceThreadStatus, type ThreadStatus } from "../../lib/model/thread-status.js";
import { inChain, marbles, synchronousSource } from "../support/marbles.js";

const active: ThreadStatus = { ...initialThreadStatus("th"), runActive: true, runId: "r1", currentSteps: ["plan"] };
const e = {
  snapshot: { type: EventType.STATE_SNAPSHOT, snapshot: active },
  stepDelta: { type: EventType.STATE_DELTA, delta: [{ op: "replace", path: "/currentSteps", value: ["plan", "apply"] }] },
  text: { type: EventType.TEXT_MESSAGE_START, messageId: "m", role: "assistant" },
  finished: { type: EventType.RUN_FINISHED, threadId: "th", runId: "obs", timestamp: 42 },
  paused: {
    type: EventType.RUN_FINISHED,
    threadId: "th",
    runId: "obs",
    outcome: { type: "interrupt", interrupts: [{ id: "perm-1", reason: "tool_call", metadata: { kind: "permission" } }] },
  },
  error: { type: EventType.RUN_ERROR, message: "failed", code: "A2A_EXECUTION_FAILED" },
} satisfies Record<string, AGUIEvent>;

const settle = () => settleStatus<ThreadStatus, AGUIEvent | typeof HEARTBEAT>(reduceThreadStatus);

describe("settleStatus", () => {
  it("says the run is no longer active before RUN_FINISHED, from the status the stream showed, with the end's timestamp", () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const events = cold("abc-(f|)", { a: e.snapshot, b: e.stepDelta, c: e.text, f: e.finished });
      expectObservable(events.pipe(settle())).toBe("abc-(xf|)", {
        a: e.snapshot,
        b: e.stepDelta,
        c: e.text,
        f: e.finished,
        x: {
          type: EventType.STATE_DELTA,
          delta: [
            { op: "replace", path: "/runActive", value: false },
            { op: "replace", path: "/currentSteps", value: [] },
          ],
          timestamp: 42,
        },
      });
      expectSubscriptions(events.subscriptions).toBe("^---!");
    });
  });

  it("names the interrupts a pause leaves waiting, and settles before RUN_ERROR too", () => {
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("a-(p|)", { a: e.snapshot, p: e.paused }).pipe(settle())).toBe("a-(xp|)", {
        a: e.snapshot,
        p: e.paused,
        x: {
          type: EventType.STATE_DELTA,
          delta: [
            { op: "replace", path: "/runActive", value: false },
            { op: "replace", path: "/currentSteps", value: [] },
            { op: "replace", path: "/pendingInterrupts", value: [{ id: "perm-1", reason: "tool_call", kind: "permission" }] },
          ],
        },
      });
      expectObservable(cold("a-(r|)", { a: e.snapshot, r: e.error }).pipe(settle())).toBe("a-(xr|)", {
        a: e.snapshot,
        r: e.error,
        x: {
          type: EventType.STATE_DELTA,
          delta: [
            { op: "replace", path: "/runActive", value: false },
            { op: "replace", path: "/currentSteps", value: [] },
          ],
        },
      });
    });
  });

  it("adds nothing when the status shown already says so, when none was shown, and passes heartbeats", () => {
    const idle: AGUIEvent = { type: EventType.STATE_SNAPSHOT, snapshot: initialThreadStatus("th") };
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold<AGUIEvent | typeof HEARTBEAT>("ah-f|", { a: idle, h: HEARTBEAT, f: e.finished }).pipe(settle())).toBe("ah-f|", {
        a: idle,
        h: HEARTBEAT,
        f: e.finished,
      });
      expectObservable(cold("c-f|", { c: e.text, f: e.finished }).pipe(settle())).toBe("c-f|", { c: e.text, f: e.finished });
    });
  });
});

describe("settleStatus and its subscription", () => {
  it("should not break unsubscription chain when unsubscribed explicitly", () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const events = cold("a-b-c-f", { a: e.snapshot, b: e.stepDelta, c: e.text, f: e.finished });
      expectObservable(events.pipe(inChain(settle())), "^--!").toBe("a-b", { a: e.snapshot, b: e.stepDelta });
      expectSubscriptions(events.subscriptions).toBe("^--!");
    });
  });

  it("reads a synchronous source to its end, and stops it when the subscriber leaves first", () => {
    const run = synchronousSource<AGUIEvent>([e.snapshot, e.finished]);
    const seen: AGUIEvent[] = [];
    let completed = false;
    run.source.pipe(settle()).subscribe({ next: (event) => seen.push(event as AGUIEvent), complete: () => (completed = true) });
    expect(seen.map((event) => event.type)).toEqual([EventType.STATE_SNAPSHOT, EventType.STATE_DELTA, EventType.RUN_FINISHED]);
    expect(completed).toBe(true);

    const left = synchronousSource<AGUIEvent>([e.snapshot, e.stepDelta, e.text, e.finished]);
    left.source.pipe(settle(), take(2)).subscribe();
    expect(left.sent).toEqual([e.snapshot, e.stepDelta]);
  });
});
