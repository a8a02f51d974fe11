import { describe, expect, it } from "@jest/globals";
import { pipe, take } from "rxjs";
import { normalizeTaskState, toKernelSignals } from "../../operators/to-kernel-signals.js";
import { unwrapStreamResponse } from "../../operators/unwrap-stream-response.js";
import { inChain, marbles, synchronousSource } from "../support/marbles.js";
import { kernelInputsOf } from "../../lib/interrupts/keep-input.js";

const status = (state: string, extra: Record<string, unknown> = {}) => ({
  statusUpdate: { taskId: "t1", contextId: "c1", status: { state, ...extra } },
});
const withIacCode = (iacCode: Record<string, unknown>, state = "TASK_STATE_WORKING", message?: unknown) => ({
  statusUpdate: { taskId: "t1", contextId: "c1", status: { state, ...(message ? { message } : {}) }, metadata: { iac_code: iacCode } },
});
const agentText = (text: string, messageId = "t1-message") => ({ messageId, role: "ROLE_AGENT", parts: [{ text }] });
const bound = { kind: "task-bound", taskId: "t1", contextId: "c1" };
const working = { kind: "task-state", state: "working" };

describe("toKernelSignals", () => {
  it("reads the task id and state of a Task frame", () => {
    marbles().run(({ cold, expectObservable }) => {
      const frames = cold("(a|)", { a: { task: { id: "t1", contextId: "c1", status: { state: "TASK_STATE_SUBMITTED" } } } });
      expectObservable(frames.pipe(unwrapStreamResponse(), toKernelSignals({ findInputs: kernelInputsOf }))).toBe("(ab|)", {
        a: bound,
        b: { kind: "task-state", state: "submitted" },
      });
    });
  });

  it("turns each status text chunk into a delta with the status message id, and passes the ids and state only when they change", () => {
    marbles().run(({ cold, expectObservable }) => {
      const frames = cold("a 9ms (b|)", {
        a: status("TASK_STATE_WORKING", { message: agentText("Hel") }),
        b: status("TASK_STATE_WORKING", { message: agentText("lo") }),
      });
      expectObservable(frames.pipe(unwrapStreamResponse(), toKernelSignals({ findInputs: kernelInputsOf }))).toBe("(abc) 5ms (d|)", {
        a: bound,
        b: { kind: "text", messageId: "t1-message", text: "Hel", source: "delta" },
        c: working,
        d: { kind: "text", messageId: "t1-message", text: "lo", source: "delta" },
      });
    });
  });

  it("marks the assistantFinal status as the final whole text", () => {
    marbles().run(({ cold, expectObservable }) => {
      const frames = cold("(a|)", { a: withIacCode({ assistantFinal: { complete: true } }, "TASK_STATE_WORKING", agentText("Hello")) });
      expectObservable(frames.pipe(unwrapStreamResponse(), toKernelSignals({ findInputs: kernelInputsOf }))).toBe("(abc|)", {
        a: bound,
        b: { kind: "text", messageId: "t1-message", text: "Hello", source: "final" },
        c: working,
      });
    });
  });

  it("reads thinking, tools, usage and the session id from metadata.iac_code, and ignores input_delta", () => {
    marbles().run(({ cold, expectObservable }) => {
      const frames = cold("(abcd|)", {
        a: withIacCode({ iacCodeSessionId: "s1", thinking: { type: "raw_thinking", text: "hmm" } }),
        b: withIacCode({ tool: { status: "input_complete", toolUseId: "u1", name: "ls", toolInput: { path: "/" } } }),
        c: withIacCode({ tool: { status: "input_delta", toolUseId: "u1", partialJson: "{" }, usage: { inputTokens: 6497.0, model: "m" } }),
        d: withIacCode({ tool: { status: "progress", toolUseId: "u1", mcp: { progress: 1 } } }),
      });
      expectObservable(frames.pipe(unwrapStreamResponse(), toKernelSignals({ findInputs: kernelInputsOf }))).toBe("(abcdfhj|)", {
        a: bound,
        b: { kind: "session-bound", sessionId: "s1" },
        c: { kind: "reasoning", text: "hmm" },
        d: working,
        f: { kind: "tool", status: "input_complete", toolCallId: "u1", toolName: "ls", input: { path: "/" }, result: undefined },
        h: { kind: "usage", usage: { inputTokens: 6497, model: "m" } },
        j: { kind: "tool-progress", tool: { status: "progress", toolUseId: "u1", mcp: { progress: 1 } } },
      });
    });
  });

  it("falls back to a summary input and a generated id for a tool without them", () => {
    marbles().run(({ cold, expectObservable }) => {
      const frames = cold("(a|)", { a: withIacCode({ tool: { status: "started", inputSummary: "list files" } }) });
      expectObservable(
        frames.pipe(unwrapStreamResponse(), toKernelSignals({ findInputs: kernelInputsOf, newToolId: () => "tool-x" })),
      ).toBe("(abc|)", {
        a: bound,
        b: { kind: "tool", status: "started", toolCallId: "tool-x", toolName: "tool", input: { summary: "list files" }, result: undefined },
        c: working,
      });
    });
  });

  it("turns an artifact update into an artifact signal", () => {
    const artifact = { artifactId: "a1", name: "plan.md", parts: [{ url: "file:///plan.md" }] };
    marbles().run(({ cold, expectObservable }) => {
      const frames = cold("(a|)", { a: { artifactUpdate: { taskId: "t1", contextId: "c1", artifact } } });
      expectObservable(frames.pipe(unwrapStreamResponse(), toKernelSignals({ findInputs: kernelInputsOf }))).toBe("(ab|)", {
        a: bound,
        b: { kind: "artifact", artifact },
      });
    });
  });

  it("uses the trailing agent turns of a Task's history as history text", () => {
    const task = {
      id: "t1",
      contextId: "c1",
      status: { state: "TASK_STATE_COMPLETED" },
      history: [{ role: "ROLE_USER", parts: [{ text: "hi" }] }, agentText("Hello ", "m1"), agentText("there", "m2")],
    };
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("(a|)", { a: { task } }).pipe(unwrapStreamResponse(), toKernelSignals({ findInputs: kernelInputsOf }))).toBe(
        "(abc|)",
        {
          a: bound,
          b: { kind: "text", messageId: "m2", text: "Hello there", source: "history" },
          c: { kind: "task-state", state: "completed" },
        },
      );
    });
  });

  it("reads a bare agent Message as the whole, completed reply", () => {
    marbles().run(({ cold, expectObservable }) => {
      const frames = cold("(a|)", { a: { message: { ...agentText("Done.", "m9"), contextId: "c1" } } });
      expectObservable(frames.pipe(unwrapStreamResponse(), toKernelSignals({ findInputs: kernelInputsOf }))).toBe("(ab|)", {
        a: { kind: "text", messageId: "m9", text: "Done.", source: "final" },
        b: { kind: "task-state", state: "completed" },
      });
    });
  });

  it("ignores unknown parts, metadata keys and user-role status text without failing", () => {
    marbles().run(({ cold, expectObservable }) => {
      const frames = cold("(a|)", {
        a: {
          statusUpdate: {
            taskId: "t1",
            status: { state: "TASK_STATE_SOMETHING_NEW", message: { role: "ROLE_USER", parts: [{ text: "echo" }] } },
            metadata: { iac_code: { mcpWarning: {}, permission: {}, thinking: { type: "summary", text: "x" } }, other: 1 },
          },
        },
      });
      expectObservable(frames.pipe(unwrapStreamResponse(), toKernelSignals({ findInputs: kernelInputsOf }))).toBe("(ab|)", {
        a: { kind: "task-bound", taskId: "t1", contextId: undefined },
        b: { kind: "task-state", state: "unknown" },
      });
    });
  });
});

describe("toKernelSignals and inputs", () => {
  it("emits the inputs, kept fields only, after the status text and before the state", () => {
    const input = { inputId: "q1", kind: "ask_user_question", required: true };
    marbles().run(({ cold, expectObservable }) => {
      const frames = cold("(a|)", {
        a: withIacCode({ input: { ...input, secretToken: "x" } }, "TASK_STATE_INPUT_REQUIRED", agentText("Which region?")),
      });
      expectObservable(frames.pipe(unwrapStreamResponse(), toKernelSignals({ findInputs: kernelInputsOf }))).toBe("(abcd|)", {
        a: bound,
        b: { kind: "text", messageId: "t1-message", text: "Which region?", source: "delta" },
        c: { kind: "inputs", inputs: [{ projection: input, sideband: false }] },
        d: { kind: "task-state", state: "input-required" },
      });
    });
  });
});

describe("toKernelSignals and changes of task", () => {
  it("passes the ids again when the task or its context changes, and the state again after another one came between", () => {
    const other = { statusUpdate: { taskId: "t2", contextId: "c1", status: { state: "TASK_STATE_WORKING" } } };
    const otherContext = { statusUpdate: { taskId: "t2", contextId: "c2", status: { state: "TASK_STATE_WORKING" } } };
    marbles().run(({ cold, expectObservable }) => {
      const frames = cold("a---b---c---d", {
        a: status("TASK_STATE_WORKING"),
        b: other,
        c: otherContext,
        d: status("TASK_STATE_SUBMITTED"),
      });
      expectObservable(frames.pipe(unwrapStreamResponse(), toKernelSignals({ findInputs: kernelInputsOf }))).toBe("(aw)b---c---(as)", {
        a: bound,
        w: working,
        b: { kind: "task-bound", taskId: "t2", contextId: "c1" },
        c: { kind: "task-bound", taskId: "t2", contextId: "c2" },
        s: { kind: "task-state", state: "submitted" },
      });
    });
  });

  it("passes the kernel session once per session it names, not again on each frame that repeats it", () => {
    marbles().run(({ cold, expectObservable }) => {
      const frames = cold("a 9ms b 9ms c 9ms d", {
        a: withIacCode({ iacCodeSessionId: "s1" }),
        b: withIacCode({ pipeline: { eventId: "e1", iacCodeSessionId: "s1" } }),
        c: withIacCode({ iacCodeSessionId: "s2" }),
        d: withIacCode({ iacCodeSessionId: "s1" }),
      });
      expectObservable(frames.pipe(unwrapStreamResponse(), toKernelSignals({ findInputs: kernelInputsOf }))).toBe(
        "(abw) 5ms e 9ms f 9ms g",
        {
          a: bound,
          b: { kind: "session-bound", sessionId: "s1" },
          w: working,
          e: { kind: "pipeline-event", envelope: { eventId: "e1", iacCodeSessionId: "s1" }, recovered: false },
          f: { kind: "session-bound", sessionId: "s2" },
          g: { kind: "session-bound", sessionId: "s1" },
        },
      );
    });
  });

  it("starts afresh for each subscription", () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const frames = cold("(a|)", { a: status("TASK_STATE_WORKING") });
      const signals = frames.pipe(unwrapStreamResponse(), toKernelSignals({ findInputs: kernelInputsOf }));
      expectObservable(signals).toBe("(aw|)", { a: bound, w: working });
      expectObservable(signals).toBe("(aw|)", { a: bound, w: working });
      expectSubscriptions(frames.subscriptions).toBe(["(^!)", "(^!)"]);
    });
  });
});

describe("toKernelSignals on a new task's stream", () => {
  it("does not read inputs from the opening Task snapshot, only from the updates after it", () => {
    const input = { inputId: "q1", kind: "ask_user_question", required: true };
    const snapshot = { task: { id: "t1", contextId: "c1", status: { state: "TASK_STATE_SUBMITTED" }, metadata: { iac_code: { input } } } };
    marbles().run(({ cold, expectObservable }) => {
      const frames = cold("a----b", { a: snapshot, b: withIacCode({ input }, "TASK_STATE_INPUT_REQUIRED") });
      expectObservable(
        frames.pipe(unwrapStreamResponse(), toKernelSignals({ findInputs: kernelInputsOf, readLeadingSnapshotInputs: false })),
      ).toBe("(as)-(cd)", {
        a: bound,
        s: { kind: "task-state", state: "submitted" },
        c: { kind: "inputs", inputs: [{ projection: input, sideband: false }] },
        d: { kind: "task-state", state: "input-required" },
      });
    });
  });
});

describe("toKernelSignals and pipeline envelopes", () => {
  it("passes each envelope on verbatim, the batch before the single one, before the other metadata", () => {
    const e1 = { eventId: "evt-1", sequence: 1.0, eventType: "step_started" };
    const e2 = { eventId: "evt-2", sequence: 2, eventType: "text_delta", data: { text: "hi" } };
    const e3 = { eventId: "evt-3", sequence: 3, eventType: "brand_new_type" };
    marbles().run(({ cold, expectObservable }) => {
      const frames = cold("(a|)", {
        a: withIacCode({
          pipeline: e3,
          pipelineBatch: { schemaVersion: "1.0", events: [e1, e2, "junk"] },
          thinking: { type: "raw_thinking", text: "t" },
        }),
      });
      expectObservable(frames.pipe(unwrapStreamResponse(), toKernelSignals({ findInputs: kernelInputsOf }))).toBe("(a123rw|)", {
        a: bound,
        1: { kind: "pipeline-event", envelope: e1, recovered: false },
        2: { kind: "pipeline-event", envelope: e2, recovered: false },
        3: { kind: "pipeline-event", envelope: e3, recovered: false },
        r: { kind: "reasoning", text: "t" },
        w: working,
      });
    });
  });
});

describe("toKernelSignals and its subscription", () => {
  const read = () => pipe(unwrapStreamResponse(), toKernelSignals({ findInputs: kernelInputsOf }));
  const hel = status("TASK_STATE_WORKING", { message: agentText("Hel") });
  const lo = status("TASK_STATE_WORKING", { message: agentText("lo") });
  const text = (delta: string) => ({ kind: "text", messageId: "t1-message", text: delta, source: "delta" });

  it("should not break unsubscription chain when unsubscribed explicitly", () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const frames = cold("a----b----c|", { a: hel, b: lo, c: lo });
      expectObservable(frames.pipe(inChain(read())), "^------!").toBe("(abc)d", { a: bound, b: text("Hel"), c: working, d: text("lo") });
      expectSubscriptions(frames.subscriptions).toBe("^------!");
    });
  });

  it("reads a synchronous source, and stops it when the subscriber leaves in the middle of a frame's signals", () => {
    const whole = synchronousSource([hel, lo]);
    const seen: unknown[] = [];
    whole.source.pipe(read()).subscribe((signal) => seen.push(signal));
    expect(seen).toEqual([bound, text("Hel"), working, text("lo")]);

    const { source, sent } = synchronousSource([hel, lo, lo]);
    source.pipe(read(), take(2)).subscribe();
    expect(sent).toEqual([hel]);
  });
});

describe("normalizeTaskState", () => {
  it.each([
    ["TASK_STATE_INPUT_REQUIRED", "input-required"],
    ["input-required", "input-required"],
    ["TASK_STATE_AUTH_REQUIRED", "auth-required"],
    ["completed", "completed"],
    ["TASK_STATE_CANCELED", "canceled"],
    ["cancelled", "canceled"],
    [7, "unknown"],
  ])("reads %p as %p", (raw, expected) => {
    expect(normalizeTaskState(raw)).toBe(expected);
  });
});
