import { describe, expect, it } from "@jest/globals";
import fc from "fast-check";
import { from, lastValueFrom, take, toArray } from "rxjs";
import type { RunItem, SignalOf } from "../../lib/model/kernel-signal.js";
import { cumulativeTextAsDeltas } from "../../operators/cumulative-text-as-deltas.js";
import { inChain, marbles, synchronousSource } from "../support/marbles.js";

const text = (words: string, messageId: string | undefined = "m1"): SignalOf<"text"> => ({
  kind: "text",
  messageId,
  text: words,
  source: "delta",
});

/** What the operator lets through of `items`, in order. */
const through = (items: RunItem[]): Promise<RunItem[]> => lastValueFrom(from(items).pipe(cumulativeTextAsDeltas(), toArray()));
const textsOf = (items: RunItem[]) => items.map((item) => ("kind" in item && item.kind === "text" ? item.text : "?"));

describe("cumulativeTextAsDeltas", () => {
  it("sends only the new part of each status text that repeats the message so far", () => {
    marbles().run(({ cold, expectObservable }) => {
      const updates = cold("a-b-c", { a: text("Hello,"), b: text("Hello, this is"), c: text("Hello, this is cumulative.") });
      expectObservable(updates.pipe(cumulativeTextAsDeltas())).toBe("a-b-c", {
        a: text("Hello,"),
        b: text(" this is"),
        c: text(" cumulative."),
      });
    });
  });

  it("sends nothing for a text equal to the message so far (a final status repeating it)", async () => {
    const done: RunItem = { kind: "task-state", state: "completed" };
    const out = await through([text("Hello,"), text("Hello,"), text("Hello, there."), text("Hello, there."), done]);
    expect(out).toEqual([text("Hello,"), text(" there."), done]);
  });

  it('reads none of an iac-code kernel\'s text so: its model tokens may repeat ("*" then "*", "1" then "1 file")', async () => {
    const session: RunItem = { kind: "session-bound", sessionId: "session-1" };
    const tokens = [text("*"), text("*"), text("bold"), text("*"), text("1", "m2"), text("1 file", "m2")];
    expect(await through([session, ...tokens])).toEqual([session, ...tokens]);
  });

  it("passes an agent's deltas unchanged, and checks none after the second", async () => {
    // The last one starts with all the text before it, but by then the message is known to be deltas.
    const deltas = [text("Hello,"), text(" this is"), text(" deltas."), text("Hello, this is deltas. Again")];
    expect(await through(deltas)).toEqual(deltas);
  });

  it("reads each message apart: a cumulative one beside one of deltas", async () => {
    const out = await through([text("Hi", "m1"), text("Hi", "m2"), text("Hi there", "m1"), text("!", "m2"), text("Hi there.", "m1")]);
    expect(out).toEqual([text("Hi", "m1"), text("Hi", "m2"), text(" there", "m1"), text("!", "m2"), text(".", "m1")]);
  });

  it("passes a text that stops extending the message whole, and reads the message as deltas from there", async () => {
    const out = await through([text("Hello,"), text("Hello, there"), text("Bye"), text("Bye now")]);
    expect(textsOf(out)).toEqual(["Hello,", " there", "Bye", "Bye now"]);
  });

  it("compares whole characters: repeated astral text is left out whole", async () => {
    const out = await through([text("🌧️ rain"), text("🌧️ rain, then ☀️"), text("🌧️ rain, then ☀️ 😀")]);
    expect(textsOf(out)).toEqual(["🌧️ rain", ", then ☀️", " 😀"]);
  });

  it("leaves alone text it cannot tell: pipeline text, a final or history text, one without a message id, and other signals", async () => {
    const pipeline: RunItem = { ...text("Plan"), pipeline: true };
    const pipelineAgain: RunItem = { ...text("Plan more"), pipeline: true };
    const final: RunItem = { ...text("Hello, world"), source: "final" };
    const history: RunItem = { ...text("Hello, world"), source: "history" };
    const anonymous = [text("Hi", undefined), text("Hi there", undefined)];
    const state: RunItem = { kind: "task-state", state: "working" };
    const items = [pipeline, pipelineAgain, text("Hello,"), final, history, ...anonymous, state];
    expect(await through(items)).toEqual(items);
  });

  it("sends, for any text sent cumulatively, that text once in all", async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: "grapheme", minLength: 1 }), fc.array(fc.nat(), { maxLength: 8 }), async (whole, cuts) => {
        // Cumulative updates: growing prefixes of the text (cut at code points), the last one the whole text.
        const points = [...whole];
        const ends = [...new Set(cuts.map((cut) => 1 + (cut % points.length)))].sort((a, b) => a - b);
        const updates = [...ends, points.length].map((end) => text(points.slice(0, end).join("")));
        expect(textsOf(await through(updates)).join("")).toBe(whole);
      }),
    );
  });
});

describe("cumulativeTextAsDeltas and its subscription", () => {
  const other: RunItem = { kind: "task-state", state: "working" };

  it("should not break unsubscription chain when unsubscribed explicitly", () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const items = cold("a-b-c|", { a: other, b: other, c: other });
      expectObservable(items.pipe(inChain(cumulativeTextAsDeltas())), "^--!").toBe("a-b", { a: other, b: other });
      expectSubscriptions(items.subscriptions).toBe("^--!");
    });
  });

  it("reads a synchronous source, and stops it when the subscriber leaves", () => {
    const { source, sent } = synchronousSource([text("a"), text("ab"), other]);
    source.pipe(cumulativeTextAsDeltas(), take(1)).subscribe();
    expect(sent).toEqual([text("a")]);
  });
});
