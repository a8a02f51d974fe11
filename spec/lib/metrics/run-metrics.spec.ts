import { describe, expect, it } from "@jest/globals";
import { EventType, type AGUIEvent } from "@ag-ui/core";
import { take } from "rxjs";
import { countRun } from "../../../lib/metrics/run-metrics.js";
import { ServiceMetrics } from "../../../lib/metrics/service-metrics.js";
import type { SseItem } from "../../../lib/run-pipeline.js";
import { HEARTBEAT } from "../../../operators/merge-heartbeat.js";
import { inChain, marbles, synchronousSource } from "../../support/marbles.js";

const e = {
  started: { type: EventType.RUN_STARTED, threadId: "th", runId: "r1" },
  text: { type: EventType.TEXT_MESSAGE_CONTENT, messageId: "m1", delta: "hi" },
  finished: { type: EventType.RUN_FINISHED, threadId: "th", runId: "r1", outcome: { type: "success" } },
  paused: { type: EventType.RUN_FINISHED, threadId: "th", runId: "r1", outcome: { type: "interrupt", interrupts: [] } },
  failed: { type: EventType.RUN_ERROR, message: "failed", code: "A2A_EXECUTION_FAILED" },
  strange: { type: EventType.RUN_ERROR, message: "failed", code: "SOMETHING_A_KERNEL_MADE_UP" },
} satisfies Record<string, AGUIEvent>;

/** The runs the metrics counted as ended, as `kind/outcome/code` → count. */
async function ended(metrics: ServiceMetrics): Promise<Record<string, number>> {
  const { values } = await metrics.runsEnded.get();
  return Object.fromEntries(values.map(({ labels, value }) => [`${labels.kind}/${labels.outcome}/${labels.code}`, value]));
}

describe("countRun", () => {
  it("passes every item through as it came and counts the run's end by RUN_FINISHED's outcome", async () => {
    const metrics = new ServiceMetrics();
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const run = cold<SseItem>("a-b-h-c|", { a: e.started, b: e.text, h: HEARTBEAT, c: e.finished });
      expectObservable(run.pipe(countRun(metrics, "new", performance.now()))).toBe("a-b-h-c|", {
        a: e.started,
        b: e.text,
        h: HEARTBEAT,
        c: e.finished,
      });
      expectSubscriptions(run.subscriptions).toBe("^------!");
    });
    expect((await metrics.runsStarted.get()).values).toEqual([{ labels: { kind: "new" }, value: 1 }]);
    expect(await ended(metrics)).toEqual({ "new/success/": 1 });
    expect((await metrics.timeToFirstEvent.get()).values.find((value) => value.metricName?.endsWith("_count"))?.value).toBe(1);
  });

  it("counts a pause as interrupt, and a RUN_ERROR by its code, one outside the documented codes as OTHER", async () => {
    const metrics = new ServiceMetrics();
    marbles().run(({ cold, expectObservable }) => {
      for (const last of [e.paused, e.failed, e.strange]) {
        const run = cold<SseItem>("ab|", { a: e.started, b: last });
        expectObservable(run.pipe(countRun(metrics, "resume", 0))).toBe("ab|", { a: e.started, b: last });
      }
    });
    expect(await ended(metrics)).toEqual({ "resume/interrupt/": 1, "resume/error/A2A_EXECUTION_FAILED": 1, "resume/error/OTHER": 1 });
  });

  it("counts a run its client left before its end as abandoned, and unsubscribes the run", async () => {
    const metrics = new ServiceMetrics();
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const run = cold<SseItem>("a-b-c|", { a: e.started, b: e.text, c: e.finished });
      expectObservable(run.pipe(inChain(countRun(metrics, "new", 0))), "^--!").toBe("a-b", { a: e.started, b: e.text });
      expectSubscriptions(run.subscriptions).toBe("^--!");
    });
    expect(await ended(metrics)).toEqual({ "new/abandoned/": 1 });
  });

  it("stops a synchronous run the moment its subscriber leaves, and counts it once", async () => {
    const metrics = new ServiceMetrics();
    const { source, sent } = synchronousSource<SseItem>([e.started, e.text, e.text, e.finished]);
    const seen: SseItem[] = [];
    source.pipe(countRun(metrics, "guidance", 0), take(2)).subscribe((item) => seen.push(item));
    expect(seen).toEqual([e.started, e.text]);
    expect(sent).toHaveLength(2);
    expect(await ended(metrics)).toEqual({ "guidance/abandoned/": 1 });
  });

  it("passes an error on, as the end it is (the pipeline turns failures into RUN_ERROR before this)", async () => {
    const metrics = new ServiceMetrics();
    marbles().run(({ cold, expectObservable }) => {
      const run = cold<SseItem>("a#", { a: e.started }, new Error("a bug"));
      expectObservable(run.pipe(countRun(metrics, "new", 0))).toBe("a#", { a: e.started }, new Error("a bug"));
    });
    expect(await ended(metrics)).toEqual({ "new/abandoned/": 1 });
  });
});
