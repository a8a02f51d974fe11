import { describe, expect, it } from "@jest/globals";
import { take } from "rxjs";
import { EventType } from "@ag-ui/core";
import type { RunItem } from "../../lib/model/kernel-signal.js";
import { projectReasoning } from "../../operators/project-reasoning.js";
import { inChain, marbles, synchronousSource } from "../support/marbles.js";

const thought = (text: string): RunItem => ({ kind: "reasoning", text });
const textStart = (messageId: string): RunItem => ({ type: EventType.TEXT_MESSAGE_START, messageId, role: "assistant" });
const textEnd = (messageId: string): RunItem => ({ type: EventType.TEXT_MESSAGE_END, messageId });
const opened = (id: string) => ({
  s: { type: EventType.REASONING_START, messageId: id },
  m: { type: EventType.REASONING_MESSAGE_START, messageId: id, role: "reasoning" },
  e: { type: EventType.REASONING_MESSAGE_END, messageId: id },
  f: { type: EventType.REASONING_END, messageId: id },
});
const content = (id: string, delta: string) => ({ type: EventType.REASONING_MESSAGE_CONTENT, messageId: id, delta });

describe("projectReasoning", () => {
  it("opens the span and its message on the first chunk and sends one CONTENT per chunk", () => {
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("a----b", { a: thought("Let me"), b: thought(" think") }).pipe(projectReasoning({ runId: "r1" }))).toBe(
        "(smc)d",
        { ...opened("reasoning-r1"), c: content("reasoning-r1", "Let me"), d: content("reasoning-r1", " think") },
      );
    });
  });

  it("closes reasoning before any text passes", () => {
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("a----t", { a: thought("hmm"), t: textStart("m1") }).pipe(projectReasoning({ runId: "r1" }))).toBe(
        "(smc)(eft)",
        { ...opened("reasoning-r1"), c: content("reasoning-r1", "hmm"), t: textStart("m1") },
      );
    });
  });

  it("names the span after the text message open when it starts", () => {
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(
        cold("t---a----x", { t: textStart("m1"), a: thought("hmm"), x: textEnd("m1") }).pipe(projectReasoning({ runId: "r1" })),
      ).toBe("t---(smc)(efx)", { ...opened("reasoning-m1"), c: content("reasoning-m1", "hmm"), t: textStart("m1"), x: textEnd("m1") });
    });
  });

  it("lets other items through untouched", () => {
    const other: RunItem = { kind: "task-state", state: "working" };
    const step: RunItem = { type: EventType.STEP_STARTED, stepName: "s" };
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const items = cold("ab|", { a: other, b: step });
      expectObservable(items.pipe(projectReasoning({ runId: "r1" }))).toBe("ab|", { a: other, b: step });
      expectSubscriptions(items.subscriptions).toBe("^-!");
    });
  });
});

describe("projectReasoning with pipeline thinking", () => {
  it("keeps the thinking of parallel sub-pipelines in separate spans named after their messages", () => {
    const a: RunItem = { kind: "reasoning", text: "A", messageId: "pm:c1" };
    const b: RunItem = { kind: "reasoning", text: "B", messageId: "pm:c2" };
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("a----b", { a, b }).pipe(projectReasoning({ runId: "r1" }))).toBe("(smc)(SMC)", {
        s: opened("reasoning-pm:c1").s,
        m: opened("reasoning-pm:c1").m,
        c: content("reasoning-pm:c1", "A"),
        S: opened("reasoning-pm:c2").s,
        M: opened("reasoning-pm:c2").m,
        C: content("reasoning-pm:c2", "B"),
      });
    });
  });
});

describe("projectReasoning and its subscription", () => {
  it("should not break unsubscription chain when unsubscribed explicitly", () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const items = cold("a----b----t|", { a: thought("Let me"), b: thought(" think"), t: textStart("m1") });
      expectObservable(items.pipe(inChain(projectReasoning({ runId: "r1" }))), "^------!").toBe("(smc)d", {
        ...opened("reasoning-r1"),
        c: content("reasoning-r1", "Let me"),
        d: content("reasoning-r1", " think"),
      });
      expectSubscriptions(items.subscriptions).toBe("^------!");
    });
  });

  it("reads a synchronous source, and stops it when the subscriber leaves in the middle of opening a span", () => {
    const whole = synchronousSource([thought("hmm"), textStart("m1")]);
    const seen: RunItem[] = [];
    whole.source.pipe(projectReasoning({ runId: "r1" })).subscribe((item) => seen.push(item));
    const span = opened("reasoning-r1");
    expect(seen).toEqual([span.s, span.m, content("reasoning-r1", "hmm"), span.e, span.f, textStart("m1")]);

    const { source, sent } = synchronousSource([thought("a"), thought("b"), textStart("m1")]);
    source.pipe(projectReasoning({ runId: "r1" }), take(2)).subscribe();
    expect(sent).toEqual([thought("a")]);
  });
});
