import { describe, expect, it } from "@jest/globals";
import { take } from "rxjs";
import { EventType, type AGUIEvent } from "@ag-ui/core";
import { EventSchemas } from "@ag-ui/core/schemas";
import type { PipelineEnvelope, RunItem } from "../../lib/model/kernel-signal.js";
import { PIPELINE_EVENT, projectPipelineEvents } from "../../operators/project-pipeline-events.js";
import { inChain, marbles, synchronousSource } from "../support/marbles.js";

const snapshotOf = (snapshot: Record<string, unknown>): RunItem => ({ kind: "pipeline-snapshot", snapshot });
const signal = (envelope: PipelineEnvelope, recovered = false): RunItem => ({ kind: "pipeline-event", envelope, recovered });
const project = () => projectPipelineEvents({ threadId: "th", newToolId: () => "tool-gen" });
const plan = { id: "plan", runId: "step-plan-1", attempt: 1 };
const candidate = (sub: string) => ({ id: sub, runId: `candidate-${sub}-0-1`, index: 0, attempt: 1 });
const generating = { id: "template_generating", runId: "cstep-template_generating-1", attempt: 1 };
const textIn = (messageId: string, text: string): RunItem => ({ kind: "text", messageId, text, source: "delta", pipeline: true });
const custom = (envelope: PipelineEnvelope): AGUIEvent => ({ type: EventType.CUSTOM, name: PIPELINE_EVENT, value: envelope });

/** The event as a client would read it: schema-valid, and nothing stripped on the way. */
const parsed = (event: AGUIEvent) => {
  expect(EventSchemas.parse(event)).toEqual(event);
  return event;
};

describe("projectPipelineEvents", () => {
  it("turns text_delta into pipeline text addressed by the pipeline message id", () => {
    const envelope = { eventType: "text_delta", scope: "step", step: plan, data: { text: "Planning" } };
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("a", { a: signal(envelope) }).pipe(project())).toBe("t", {
        t: textIn("pipeline-message:step:step-plan-1", "Planning"),
      });
    });
  });

  it("gives parallel candidates' interleaved text_deltas different message ids", () => {
    const delta = (sub: string, text: string) =>
      signal({
        eventType: "text_delta",
        scope: "candidate_step",
        step: plan,
        candidate: candidate(sub),
        candidateStep: generating,
        data: { text },
      });
    const id = (sub: string) => `pipeline-message:candidate_step:candidate-${sub}-0-1:cstep-template_generating-1:step-plan-1`;
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("abc", { a: delta("c1", "one "), b: delta("c2", "two "), c: delta("c1", "three") }).pipe(project())).toBe(
        "abc",
        {
          a: textIn(id("c1"), "one "),
          b: textIn(id("c2"), "two "),
          c: textIn(id("c1"), "three"),
        },
      );
    });
  });

  it("builds the message id from ids when run ids are missing, without repeating a coordinate, and defaults the scope", () => {
    const envelope = {
      eventType: "text_delta",
      candidate: { id: "c1" },
      candidateStep: { id: "c1" },
      step: { id: "plan" },
      data: { text: "x" },
    };
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("a", { a: signal(envelope) }).pipe(project())).toBe("t", {
        t: textIn("pipeline-message:pipeline:c1:plan", "x"),
      });
    });
  });

  it("names the pipeline run after a recovery snapshot, with one ACTIVITY_SNAPSHOT carrying the snapshot verbatim", () => {
    const snapshot = {
      schemaVersion: "1.1",
      pipelineRunId: "prun-7",
      lastSequence: 12.0,
      steps: [{ id: "plan", status: "completed" }],
      display: { messages: [] },
    };
    const activity = {
      type: EventType.ACTIVITY_SNAPSHOT,
      messageId: "pipeline:prun-7",
      activityType: "iac-code.pipeline.v1",
      content: { schemaVersion: 1, pipelineRunId: "prun-7", snapshot },
      replace: true,
    } as AGUIEvent;
    marbles().run(({ cold, expectObservable }) => {
      const signals = cold("sa", { s: snapshotOf(snapshot), a: signal({ eventType: "text_delta", data: { text: "again" } }, true) });
      // The snapshot names the activity; the message stays the envelope's, so a re-attach never splits one.
      expectObservable(signals.pipe(project())).toBe("sa", { s: activity, a: textIn("pipeline-message:pipeline", "again") });
    });
    parsed(activity);
  });

  it("keeps the thread's pipeline id when the snapshot names no run", () => {
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("s", { s: snapshotOf({ lastSequence: 3 }) }).pipe(project())).toBe("s", {
        s: {
          type: EventType.ACTIVITY_SNAPSHOT,
          messageId: "pipeline:pipeline-th",
          activityType: "iac-code.pipeline.v1",
          content: { schemaVersion: 1, pipelineRunId: "pipeline-th", snapshot: { lastSequence: 3 } },
          replace: true,
        },
      });
    });
  });

  it("starts every subscription from the thread's pipeline id", () => {
    const operator = project();
    const first: RunItem[] = [];
    const second: RunItem[] = [];
    marbles().run(({ cold }) => {
      cold("ab", { a: snapshotOf({ pipelineRunId: "p9" }), b: snapshotOf({}) })
        .pipe(operator)
        .subscribe((item) => first.push(item));
      cold("-a", { a: snapshotOf({}) })
        .pipe(operator)
        .subscribe((item) => second.push(item));
    });
    expect(first.map((item) => (item as { messageId: string }).messageId)).toEqual(["pipeline:p9", "pipeline:p9"]);
    expect(second).toEqual([expect.objectContaining({ messageId: "pipeline:pipeline-th" })]);
  });

  it("turns raw thinking into reasoning of the pipeline message, and ignores any other thinking", () => {
    marbles().run(({ cold, expectObservable }) => {
      const signals = cold("ab", {
        a: signal({ eventType: "thinking_delta", step: plan, data: { type: "raw_thinking", text: "hmm" } }),
        b: signal({ eventType: "thinking_delta", step: plan, data: { type: "summary", text: "no" } }),
      });
      expectObservable(signals.pipe(project())).toBe("a-", {
        a: { kind: "reasoning", text: "hmm", messageId: "pipeline-message:pipeline:step-plan-1" },
      });
    });
  });

  it("turns tool_started into a complete call and tool_result into its result, failed only when isError is true", () => {
    const failedU1 = { kind: "tool", status: "failed", toolCallId: "u1", toolName: "write_file", input: undefined, result: "denied" };
    marbles().run(({ cold, expectObservable }) => {
      const signals = cold("abcd", {
        a: signal({ eventType: "tool_started", data: { toolUseId: "u1", toolName: "write_file", input: { path: "a.yaml" } } }),
        b: signal({ eventType: "tool_result", data: { toolUseId: "u1", toolName: "write_file", isError: true, result: "denied" } }),
        c: signal({ eventType: "tool_result", data: { toolUseId: "u2", toolName: "read_file", isError: "true", result: { ok: 1 } } }),
        d: signal({ eventType: "tool_started", data: {} }),
      });
      expectObservable(signals.pipe(project())).toBe("abcd", {
        a: {
          kind: "tool",
          status: "input_complete",
          toolCallId: "u1",
          toolName: "write_file",
          input: { path: "a.yaml" },
          result: undefined,
          messageId: "pipeline-message:pipeline",
        },
        b: { ...failedU1, messageId: "pipeline-message:pipeline" },
        c: {
          kind: "tool",
          status: "completed",
          toolCallId: "u2",
          toolName: "read_file",
          input: undefined,
          result: { ok: 1 },
          messageId: "pipeline-message:pipeline",
        },
        d: {
          kind: "tool",
          status: "input_complete",
          toolCallId: "tool-gen",
          toolName: "tool",
          input: {},
          result: undefined,
          messageId: "pipeline-message:pipeline",
        },
      });
    });
  });

  it("turns usage into a usage signal with whole token counts and no empty fields", () => {
    marbles().run(({ cold, expectObservable }) => {
      const envelope = {
        eventType: "usage",
        data: { provider: "dashscope", model: "", inputTokens: 6497.0, outputTokens: 12.7, totalTokens: 6509, cachedInputTokens: "3" },
      };
      expectObservable(cold("a", { a: signal(envelope) }).pipe(project())).toBe("u", {
        u: { kind: "usage", usage: { provider: "dashscope", inputTokens: 6497, outputTokens: 12, totalTokens: 6509 } },
      });
    });
  });

  it("maps nothing standard when data is missing", () => {
    marbles().run(({ cold, expectObservable }) => {
      const signals = cold("abc", {
        a: signal({ eventType: "text_delta" }),
        b: signal({ eventType: "text_delta", data: { text: "" } }),
        c: signal({ eventType: "usage", data: [1] }),
      });
      expectObservable(signals.pipe(project())).toBe("---");
    });
  });

  it("opens and finishes top-level steps by bare step id", () => {
    marbles().run(({ cold, expectObservable }) => {
      const signals = cold("abc", {
        a: signal({ eventType: "step_started", step: plan }),
        b: signal({ eventType: "input_received", step: plan }),
        c: signal({ eventType: "step_completed", step: plan }),
      });
      expectObservable(signals.pipe(project())).toBe("abc", {
        a: { kind: "step", phase: "started", key: "step:plan", name: "plan", facts: expect.objectContaining({ key: "step:plan" }) },
        b: { kind: "step", phase: "started", key: "step:plan", name: "plan", facts: expect.objectContaining({ reopened: true }) },
        c: { kind: "step", phase: "finished", key: "step:plan", name: "plan", facts: expect.objectContaining({ outcome: "completed" }) },
      });
    });
  });

  it("namespaces a candidate's steps by candidate id, then sub-pipeline id, then run id, and names them by the whole key", () => {
    const started = (key: string) => ({ kind: "step", phase: "started", key, name: key, facts: expect.objectContaining({ key }) });
    marbles().run(({ cold, expectObservable }) => {
      const signals = cold("abcd", {
        a: signal({ eventType: "candidate_step_started", step: plan, candidate: candidate("c1"), candidateStep: generating }),
        b: signal({ eventType: "candidate_step_started", step: plan, candidate: candidate("c2"), candidateStep: generating }),
        c: signal({
          eventType: "candidate_step_started",
          subPipelineId: "sub-3",
          candidate: { runId: "candidate-sub-3-2-1" },
          candidateStep: generating,
        }),
        d: signal({ eventType: "candidate_step_started", candidate: { runId: "candidate-x-0-1" }, candidateStep: generating }),
      });
      expectObservable(signals.pipe(project())).toBe("abcd", {
        a: started("candidate:c1:template_generating"),
        b: started("candidate:c2:template_generating"),
        c: started("candidate:sub-3:template_generating"),
        d: started("candidate:candidate-x-0-1:template_generating"),
      });
    });
  });

  it("finishes a failed step and also sends the failure as CUSTOM, the envelope verbatim", () => {
    const failed = {
      eventType: "candidate_step_failed",
      eventId: "evt-9",
      sequence: 9.0,
      candidate: candidate("c1"),
      candidateStep: generating,
      data: { error: "boom" },
    };
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("a", { a: signal(failed) }).pipe(project())).toBe("(sc)", {
        s: {
          kind: "step",
          phase: "finished",
          key: "candidate:c1:template_generating",
          name: "candidate:c1:template_generating",
          facts: expect.objectContaining({ outcome: "failed", error: { message: "boom" } }),
        },
        c: custom(failed),
      });
    });
  });

  it("sends a step failure with no step id as CUSTOM only", () => {
    const failed = { eventType: "step_failed", step: { runId: "step-x-1" } };
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("a", { a: signal(failed) }).pipe(project())).toBe("c", { c: custom(failed) });
    });
  });

  it("sends an allowlisted envelope as CUSTOM iac-code.pipeline.v1 with nothing added or removed", () => {
    const envelope = {
      schemaVersion: "1.0",
      extensionUri: "urn:iac-code:a2a:pipeline-events:v1",
      eventId: "evt-1",
      sequence: 3.0,
      createdAt: "2026-01-01T00:00:00Z",
      eventType: "stack_progress",
      scope: "stack",
      pipelineRunId: "prun-1",
      taskId: "t1",
      contextId: "ctx",
      pipelineName: "demo",
      status: "working",
      data: { stackName: "vpc", progress: 0.5 },
      iacCodeSessionId: "s1",
    };
    let out: RunItem | undefined;
    marbles().run(({ cold }) => {
      cold("a", { a: signal(envelope) })
        .pipe(project())
        .subscribe((item) => (out = item));
    });
    expect(out).toStrictEqual(custom(envelope));
    expect((out as { value: unknown }).value).toBe(envelope);
    parsed(out as AGUIEvent);
  });

  it("sends nothing for suppressed and unknown types", () => {
    marbles().run(({ cold, expectObservable }) => {
      const signals = cold("abcde", {
        a: signal({ eventType: "pipeline_failed", step: plan }),
        b: signal({ eventType: "message_started", data: { text: "x" } }),
        c: signal({ eventType: "brand_new_event", step: plan }),
        d: signal({ eventType: 42 }),
        e: signal({}),
      });
      expectObservable(signals.pipe(project())).toBe("-----");
    });
  });

  it("passes everything else through in order", () => {
    const text: RunItem = { kind: "text", messageId: "m", text: "hi", source: "delta" };
    const end: RunItem = { kind: "run-end", error: undefined, kernelSettled: true };
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const signals = cold("ab|", { a: text, b: end });
      expectObservable(signals.pipe(project())).toBe("ab|", { a: text, b: end });
      expectSubscriptions(signals.subscriptions).toBe("^-!");
    });
  });
});

describe("projectPipelineEvents and its subscription", () => {
  const envelope = { eventType: "text_delta", scope: "step", step: plan, data: { text: "Planning" } };
  const text = textIn("pipeline-message:step:step-plan-1", "Planning");
  const other: RunItem = { kind: "task-state", state: "working" };

  it("should not break unsubscription chain when unsubscribed explicitly", () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const signals = cold("a-b-c|", { a: signal(envelope), b: other, c: signal(envelope) });
      expectObservable(signals.pipe(inChain(project())), "^--!").toBe("a-b", { a: text, b: other });
      expectSubscriptions(signals.subscriptions).toBe("^--!");
    });
  });

  it("projects a synchronous source, and stops it when the subscriber leaves", () => {
    const whole = synchronousSource([signal(envelope), other]);
    const seen: RunItem[] = [];
    whole.source.pipe(project()).subscribe((item) => seen.push(item));
    expect(seen).toEqual([text, other]);

    const { source, sent } = synchronousSource([signal(envelope), other, signal(envelope)]);
    source.pipe(project(), take(1)).subscribe();
    expect(sent).toEqual([signal(envelope)]);
  });
});
