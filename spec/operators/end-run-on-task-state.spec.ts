import { describe, expect, it } from "@jest/globals";
import { AguiError } from "../../lib/errors.js";
import { take } from "rxjs";
import { endRunOnTaskState } from "../../operators/end-run-on-task-state.js";
import type { KernelSignal } from "../../lib/model/kernel-signal.js";
import { inChain, marbles, synchronousSource } from "../support/marbles.js";

const state = (name: string) => ({ kind: "task-state", state: name }) as KernelSignal;
const text: KernelSignal = { kind: "text", messageId: "m", text: "hi", source: "delta" };

describe("endRunOnTaskState", () => {
  it("ends the run with success on completed and unsubscribes from the kernel stream", () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const signals = cold("a-b-c-d", { a: state("working"), b: text, c: state("completed"), d: text });
      expectObservable(signals.pipe(endRunOnTaskState())).toBe("a-b-(ce|)", {
        a: state("working"),
        b: text,
        c: state("completed"),
        e: { kind: "run-end", error: undefined, kernelSettled: true },
      });
      expectSubscriptions(signals.subscriptions).toBe("^---!");
    });
  });

  it("treats input-required as a settled, successful end", () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const signals = cold("a-b", { a: state("input-required"), b: text });
      expectObservable(signals.pipe(endRunOnTaskState())).toBe("(ae|)", {
        a: state("input-required"),
        e: { kind: "run-end", error: undefined, kernelSettled: true },
      });
      expectSubscriptions(signals.subscriptions).toBe("(^!)");
    });
  });

  it.each([
    ["canceled", "CANCELLED"],
    ["failed", "A2A_EXECUTION_FAILED"],
    ["rejected", "A2A_EXECUTION_FAILED"],
    ["auth-required", "A2A_EXECUTION_FAILED"],
  ])("ends a %s task with %s", (name, code) => {
    let end: KernelSignal | undefined;
    marbles().run(({ cold }) => {
      cold("a", { a: state(name) })
        .pipe(endRunOnTaskState())
        .subscribe((signal) => (end = signal));
    });
    expect(end).toMatchObject({ kind: "run-end", kernelSettled: true, error: { code } });
  });

  it("fails the run when the stream ends while the task is still working", () => {
    let end: KernelSignal | undefined;
    marbles().run(({ cold }) => {
      cold("a|", { a: state("working") })
        .pipe(endRunOnTaskState())
        .subscribe((signal) => (end = signal));
    });
    expect(end).toMatchObject({ kind: "run-end", kernelSettled: false, error: { code: "A2A_EXECUTION_FAILED" } });
  });

  it("turns an upstream error into a run end that keeps its code", () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const error = new AguiError("A2A_UNAVAILABLE");
      const signals = cold("a#", { a: text }, error);
      expectObservable(signals.pipe(endRunOnTaskState())).toBe("a(e|)", {
        a: text,
        e: { kind: "run-end", error, kernelSettled: false },
      });
      expectSubscriptions(signals.subscriptions).toBe("^!");
    });
  });

  it("reads an unexpected exception as A2A_UNAVAILABLE", () => {
    let end: KernelSignal | undefined;
    marbles().run(({ cold }) => {
      cold<KernelSignal>("#", {}, new TypeError("boom"))
        .pipe(endRunOnTaskState())
        .subscribe((signal) => (end = signal));
    });
    expect(end).toMatchObject({ kind: "run-end", error: { code: "A2A_UNAVAILABLE" } });
  });

  it("does not end on submitted, working or unknown states", () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const signals = cold("abc", { a: state("submitted"), b: state("working"), c: state("unknown") });
      expectObservable(signals.pipe(endRunOnTaskState())).toBe("abc", { a: state("submitted"), b: state("working"), c: state("unknown") });
      expectSubscriptions(signals.subscriptions).toBe("^");
    });
  });

  it("ends the run at unanswered inputs, whatever the task state, keeping the inputs", () => {
    const permission = { projection: { inputId: "p1", kind: "permission", required: true }, sideband: false };
    const answered = { projection: { inputId: "q0", kind: "question", required: true }, sideband: false };
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const signals = cold("a-b-c", {
        a: state("working"),
        b: { kind: "inputs", inputs: [answered] } as KernelSignal,
        c: { kind: "inputs", inputs: [answered, permission] } as KernelSignal,
      });
      expectObservable(signals.pipe(endRunOnTaskState({ isAnswered: (id) => id === "q0" }))).toBe("a---(e|)", {
        a: state("working"),
        e: { kind: "run-end", error: undefined, kernelSettled: true, inputs: [permission] },
      });
      expectSubscriptions(signals.subscriptions).toBe("^---!");
    });
  });

  it("should not break unsubscription chain when unsubscribed explicitly", () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const signals = cold("a-b-c-d", { a: state("working"), b: text, c: text, d: state("completed") });
      expectObservable(signals.pipe(inChain(endRunOnTaskState())), "^--!").toBe("a-b", { a: state("working"), b: text });
      expectSubscriptions(signals.subscriptions).toBe("^--!");
    });
  });

  it("stops a synchronous source at the end it decided, and when the subscriber leaves first", () => {
    const run = synchronousSource([state("working"), text, state("completed"), text, text]);
    const seen: KernelSignal[] = [];
    let completed = false;
    run.source.pipe(endRunOnTaskState()).subscribe({ next: (signal) => seen.push(signal), complete: () => (completed = true) });
    expect(seen).toEqual([state("working"), text, state("completed"), { kind: "run-end", error: undefined, kernelSettled: true }]);
    expect(completed).toBe(true);
    expect(run.sent).toEqual([state("working"), text, state("completed")]);

    const left = synchronousSource([state("working"), text, text, state("completed")]);
    left.source.pipe(endRunOnTaskState(), take(2)).subscribe();
    expect(left.sent).toEqual([state("working"), text]);
  });
});
