import { describe, it } from "@jest/globals";
import { EventType } from "@ag-ui/core";
import { AguiError } from "../../lib/errors.js";
import type { RunItem } from "../../lib/model/kernel-signal.js";
import { finishRun } from "../../operators/finish-run.js";
import { marbles } from "../support/marbles.js";

const options = { threadId: "th", runId: "r1", describe: (error: AguiError) => `message for ${error.code}` };
const usage = [{ provider: "p", inputTokens: 1 }];

describe("finishRun", () => {
  it("finishes a successful run with its usage and drops signals nobody projected", () => {
    const event: RunItem = { type: EventType.STEP_STARTED, stepName: "s" };
    marbles().run(({ cold, expectObservable }) => {
      const items = cold<RunItem>("abc", {
        a: event,
        b: { kind: "task-state", state: "working" },
        c: { kind: "run-end", error: undefined, kernelSettled: true, usage },
      });
      expectObservable(items.pipe(finishRun(options))).toBe("a-f", {
        a: event,
        f: { type: EventType.RUN_FINISHED, threadId: "th", runId: "r1", outcome: { type: "success" }, usage },
      });
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
});
