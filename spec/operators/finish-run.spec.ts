import { describe, expect, it } from "@jest/globals";
import { take } from "rxjs";
import { EventType } from "@ag-ui/core";
import { AguiError } from "../../lib/errors.js";
import type { RunItem } from "../../lib/model/kernel-signal.js";
import { finishRun } from "../../operators/finish-run.js";
import { inChain, marbles, synchronousSource } from "../support/marbles.js";

const options = { threadId: "th", runId: "r1", describe: (error: AguiError) => `message for ${error.code}` };
const usage = [{ provider: "p", inputTokens: 1 }];

describe("finishRun", () => {
  it("finishes a successful run with its usage and drops signals nobody projected", () => {
    const event: RunItem = { type: EventType.STEP_STARTED, stepName: "s" };
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const items = cold<RunItem>("abc|", {
        a: event,
        b: { kind: "task-state", state: "working" },
        c: { kind: "run-end", error: undefined, kernelSettled: true, usage },
      });
      expectObservable(items.pipe(finishRun(options))).toBe("a-f|", {
        a: event,
        f: { type: EventType.RUN_FINISHED, threadId: "th", runId: "r1", outcome: { type: "success" }, usage },
      });
      expectSubscriptions(items.subscriptions).toBe("^--!");
    });
  });

  it("turns an error end into RUN_ERROR with the code and the described message", () => {
    marbles().run(({ cold, expectObservable }) => {
      const items = cold("a", { a: { kind: "run-end", error: new AguiError("CANCELLED"), kernelSettled: true } as RunItem });
      expectObservable(items.pipe(finishRun(options))).toBe("e", {
        e: { type: EventType.RUN_ERROR, code: "CANCELLED", message: "message for CANCELLED" },
      });
    });
  });

  it("carries a detail apart from the message, in the RUN_ERROR's metadata, and none when there is none", () => {
    const describe = (error: AguiError) =>
      error.params.reason === "taskEnded" ? { message: "The A2A task to resume is unavailable.", detail: "It ended." } : { message: "m" };
    marbles().run(({ cold, expectObservable }) => {
      const items = cold("ab", {
        a: { kind: "run-end", error: new AguiError("EXECUTION_LOST", { reason: "taskEnded" }), kernelSettled: true } as RunItem,
        b: { kind: "run-end", error: new AguiError("CANCELLED"), kernelSettled: true } as RunItem,
      });
      expectObservable(items.pipe(finishRun({ ...options, describe }))).toBe("ab", {
        a: {
          type: EventType.RUN_ERROR,
          code: "EXECUTION_LOST",
          message: "The A2A task to resume is unavailable.",
          metadata: { "iac-code": { detail: "It ended." } },
        },
        b: { type: EventType.RUN_ERROR, code: "CANCELLED", message: "m" },
      });
    });
  });
});

describe("finishRun of a run the user cancelled at an interrupt", () => {
  it("finishes (RUN_FINISHED, not RUN_ERROR: a client clears its pending interrupts only then) with a result that says cancelled", () => {
    marbles().run(({ cold, expectObservable }) => {
      const items = cold("a|", { a: { kind: "run-end", error: undefined, kernelSettled: true, cancelled: true } as RunItem });
      expectObservable(items.pipe(finishRun(options))).toBe("f|", {
        f: { type: EventType.RUN_FINISHED, threadId: "th", runId: "r1", outcome: { type: "success" }, result: { cancelled: true } },
      });
    });
  });
});

describe("finishRun and its subscription", () => {
  const step: RunItem = { type: EventType.STEP_STARTED, stepName: "s" };
  const working: RunItem = { kind: "task-state", state: "working" };
  const end: RunItem = { kind: "run-end", error: undefined, kernelSettled: true };
  const finished = { type: EventType.RUN_FINISHED, threadId: "th", runId: "r1", outcome: { type: "success" } };

  it("should not break unsubscription chain when unsubscribed explicitly", () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const items = cold("a-b-c|", { a: step, b: working, c: end });
      expectObservable(items.pipe(inChain(finishRun(options))), "^-!").toBe("a", { a: step });
      expectSubscriptions(items.subscriptions).toBe("^-!");
    });
  });

  it("finishes a synchronous source, and stops it when the subscriber leaves", () => {
    const whole = synchronousSource([step, working, end]);
    const seen: unknown[] = [];
    whole.source.pipe(finishRun(options)).subscribe((event) => seen.push(event));
    expect(seen).toEqual([step, finished]);

    const { source, sent } = synchronousSource([step, working, step, end]);
    source.pipe(finishRun(options), take(1)).subscribe();
    expect(sent).toEqual([step]);
  });
});
