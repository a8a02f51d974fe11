import { describe, expect, it } from "@jest/globals";
import { take } from "rxjs";
import { dedupePipelineEvents, sequenceOf } from "../../operators/dedupe-pipeline-events.js";
import type { RunItem } from "../../lib/model/kernel-signal.js";
import { inChain, marbles, synchronousSource } from "../support/marbles.js";

const live = (eventId: string | undefined, sequence?: unknown): RunItem => ({
  kind: "pipeline-event",
  recovered: false,
  envelope: { eventType: "pipeline_warning", eventId, sequence },
});
const recovered = (eventId: string | undefined, sequence?: unknown): RunItem => ({
  kind: "pipeline-event",
  recovered: true,
  envelope: { eventType: "pipeline_warning", eventId, sequence },
});
const snapshot = (lastSequence: unknown): RunItem => ({ kind: "pipeline-snapshot", snapshot: { pipelineRunId: "p1", lastSequence } });
const end: RunItem = { kind: "run-end", error: undefined, kernelSettled: true };
const working: RunItem = { kind: "task-state", state: "working" };
const endAt = (pipelineSequence: number): RunItem => ({ ...end, pipelineSequence });

describe("dedupePipelineEvents", () => {
  it("maps a repeated eventId once, whatever its sequence", () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const signals = cold("abcd|", { a: live("e1", 1), b: live("e1", 1), c: live("e1", 2), d: end });
      expectObservable(signals.pipe(dedupePipelineEvents({ cursor: 0 }))).toBe("a--d|", { a: live("e1", 1), d: endAt(1) });
      expectSubscriptions(signals.subscriptions).toBe("^---!");
    });
  });

  it("drops a live event whose sequence is not above the highest seen, even under a new eventId", () => {
    marbles().run(({ cold, expectObservable }) => {
      const signals = cold("abcd", { a: live("e1", 5), b: live("e2", 3), c: live("e3", 5), d: live("e4", 6) });
      expectObservable(signals.pipe(dedupePipelineEvents({ cursor: 0 }))).toBe("a--d", { a: live("e1", 5), d: live("e4", 6) });
    });
  });

  it("judges a live event without a sequence (or sequence 0) by its eventId alone", () => {
    marbles().run(({ cold, expectObservable }) => {
      const signals = cold("abcd", { a: live("e1", 5), b: live("e2", 0), c: live("e3"), d: live("e3") });
      expectObservable(signals.pipe(dedupePipelineEvents({ cursor: 0 }))).toBe("abc-", {
        a: live("e1", 5),
        b: live("e2", 0),
        c: live("e3"),
      });
    });
  });

  it("keeps a recovered event with a new eventId below the highest sequence, but not one without an eventId", () => {
    marbles().run(({ cold, expectObservable }) => {
      const signals = cold("abcde", {
        a: live("e1", 8),
        b: recovered("e2", 4),
        c: recovered(undefined, 4),
        d: recovered("e1", 9),
        e: recovered(undefined, 9),
      });
      expectObservable(signals.pipe(dedupePipelineEvents({ cursor: 0 }))).toBe("ab--e", {
        a: live("e1", 8),
        b: recovered("e2", 4),
        e: recovered(undefined, 9),
      });
    });
  });

  it("starts from the persisted cursor, reads whole floats as sequences and stamps the highest on the run end", () => {
    marbles().run(({ cold, expectObservable }) => {
      const signals = cold("abcd", { a: live("e1", 5.0), b: live("e2", 6.0), c: live("e3", 6.5), d: end });
      expectObservable(signals.pipe(dedupePipelineEvents({ cursor: 5.0 }))).toBe("-bcd", {
        b: live("e2", 6.0),
        c: live("e3", 6.5),
        d: endAt(6),
      });
    });
  });

  it("raises the cursor to a snapshot's lastSequence only once the recovered events after it are through", () => {
    marbles().run(({ cold, expectObservable }) => {
      const signals = cold("sabcdef", {
        s: snapshot(9.0),
        a: recovered(undefined, 3),
        b: recovered(undefined, 5),
        c: working,
        d: live("e8", 8),
        e: live("e10", 10),
        f: end,
      });
      expectObservable(signals.pipe(dedupePipelineEvents({ cursor: 2 }))).toBe("sabc-ef", {
        s: snapshot(9.0),
        a: recovered(undefined, 3),
        b: recovered(undefined, 5),
        c: working,
        e: live("e10", 10),
        f: endAt(10),
      });
    });
  });

  it("counts a snapshot's lastSequence at the run end when nothing live followed it", () => {
    marbles().run(({ cold, expectObservable }) => {
      const signals = cold("sae", { s: snapshot(9), a: recovered("e4", 4), e: end });
      expectObservable(signals.pipe(dedupePipelineEvents({ cursor: 2 }))).toBe("sae", {
        s: snapshot(9),
        a: recovered("e4", 4),
        e: endAt(9),
      });
    });
  });

  it("never lowers the cursor to a snapshot behind it", () => {
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("se", { s: snapshot(3), e: end }).pipe(dedupePipelineEvents({ cursor: 7 }))).toBe("se", {
        s: snapshot(3),
        e: endAt(7),
      });
    });
  });

  it("starts every subscription from the cursor it was given", () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const signals = cold("ae|", { a: live("e1", 4), e: end });
      const run = signals.pipe(dedupePipelineEvents({ cursor: 1 }));
      expectObservable(run).toBe("ae|", { a: live("e1", 4), e: endAt(4) });
      expectObservable(run).toBe("ae|", { a: live("e1", 4), e: endAt(4) });
      expectSubscriptions(signals.subscriptions).toBe(["^-!", "^-!"]);
    });
  });

  it("passes everything else through in order", () => {
    const text: RunItem = { kind: "text", messageId: "m", text: "hi", source: "delta" };
    const event: RunItem = { type: "STEP_STARTED", stepName: "plan" } as RunItem;
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("ab", { a: text, b: event }).pipe(dedupePipelineEvents({ cursor: 0 }))).toBe("ab", { a: text, b: event });
    });
  });
});

describe("sequenceOf", () => {
  it("reads whole positive numbers and treats anything else as no sequence", () => {
    expect([12.0, 3, 0, -1, 1.5, "4", null, undefined, Number.NaN, Infinity].map(sequenceOf)).toEqual([12, 3, 0, 0, 0, 0, 0, 0, 0, 0]);
  });
});

describe("dedupePipelineEvents and its subscription", () => {
  it("should not break unsubscription chain when unsubscribed explicitly", () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const signals = cold("a-b-c-d|", { a: live("e1", 1), b: live("e1", 1), c: live("e2", 2), d: end });
      expectObservable(signals.pipe(inChain(dedupePipelineEvents({ cursor: 0 }))), "^----!").toBe("a---c", {
        a: live("e1", 1),
        c: live("e2", 2),
      });
      expectSubscriptions(signals.subscriptions).toBe("^----!");
    });
  });

  it("dedupes a synchronous source, and stops it when the subscriber leaves", () => {
    const whole = synchronousSource([live("e1", 1), live("e1", 1), end]);
    const seen: RunItem[] = [];
    whole.source.pipe(dedupePipelineEvents({ cursor: 0 })).subscribe((item) => seen.push(item));
    expect(seen).toEqual([live("e1", 1), endAt(1)]);

    const { source, sent } = synchronousSource([live("e1", 1), live("e1", 1), live("e2", 2), end]);
    source.pipe(dedupePipelineEvents({ cursor: 0 }), take(2)).subscribe();
    expect(sent).toEqual([live("e1", 1), live("e1", 1), live("e2", 2)]);
  });
});
