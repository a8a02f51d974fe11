import { describe, it } from "@jest/globals";
import { EventType, type AGUIEvent } from "@ag-ui/core";
import { emptyPipelineGraph, reducePipelineGraph } from "../../lib/model/pipeline-graph.js";
import { stepMetadata } from "../../lib/model/step-facts.js";
import { keepPipelineGraphCurrent } from "../../operators/keep-pipeline-graph.js";
import { inChain, marbles } from "../support/marbles.js";

const started: AGUIEvent = {
  type: EventType.STEP_STARTED,
  stepName: "plan",
  timestamp: 7,
  metadata: stepMetadata({ schemaVersion: 1, key: "step:plan", stepId: "plan", attempt: 1 }),
};
const graphAfterStart = reducePipelineGraph(emptyPipelineGraph(), started);
const snapshot = (pipelineGraph = emptyPipelineGraph()): AGUIEvent => ({
  type: EventType.STATE_SNAPSHOT,
  snapshot: { runActive: true, pipelineGraph },
});
const graphDelta = (value: unknown, timestamp?: number): AGUIEvent => ({
  type: EventType.STATE_DELTA,
  delta: [{ op: "replace", path: "/pipelineGraph", value }],
  ...(timestamp === undefined ? {} : { timestamp }),
});
const text: AGUIEvent = { type: EventType.TEXT_MESSAGE_CONTENT, messageId: "m", delta: "x" };

describe("keepPipelineGraphCurrent", () => {
  it("sends the graph's change right after the event that made it, from the graph the snapshot handed over", () => {
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("s-a-----t", { s: snapshot(), a: started, t: text }).pipe(keepPipelineGraphCurrent())).toBe("s-(ad)--t", {
        s: snapshot(),
        a: started,
        d: graphDelta(graphAfterStart, 7),
        t: text,
      });
    });
  });

  it("leaves out the status source's own changes to the graph, and keeps its other keys", () => {
    const hubDelta: AGUIEvent = {
      type: EventType.STATE_DELTA,
      delta: [
        { op: "replace", path: "/runActive", value: false },
        { op: "replace", path: "/pipelineGraph", value: graphAfterStart },
      ],
    };
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("s-h-g", { s: snapshot(), h: hubDelta, g: graphDelta(graphAfterStart) }).pipe(keepPipelineGraphCurrent())).toBe(
        "s-h--",
        {
          s: snapshot(),
          h: { type: EventType.STATE_DELTA, delta: [{ op: "replace", path: "/runActive", value: false }] },
        },
      );
    });
  });

  it("sends nothing for an event that leaves the graph as the view has it (a replay of what the snapshot knew)", () => {
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("s-a", { s: snapshot(graphAfterStart), a: started }).pipe(keepPipelineGraphCurrent())).toBe("s-a", {
        s: snapshot(graphAfterStart),
        a: started,
      });
    });
  });

  it("passes heartbeats and a stream with no status through untouched", () => {
    const heartbeat = { heartbeat: true };
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("h-a", { h: heartbeat, a: started }).pipe(keepPipelineGraphCurrent())).toBe("h-a", {
        h: heartbeat,
        a: started,
      });
    });
  });

  it("should not break unsubscription chain when unsubscribed explicitly", () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const events = cold("s-a-t|", { s: snapshot(), a: started, t: text });
      expectObservable(events.pipe(inChain(keepPipelineGraphCurrent())), "^--!").toBe("s-(ad)", {
        s: snapshot(),
        a: started,
        d: graphDelta(graphAfterStart, 7),
      });
      expectSubscriptions(events.subscriptions).toBe("^--!");
    });
  });
});
