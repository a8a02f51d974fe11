import { createHash } from "node:crypto";
import { describe, it } from "@jest/globals";
import fc from "fast-check";
import { from, lastValueFrom, take, toArray } from "rxjs";
import { EventType, type AGUIEvent } from "@ag-ui/core";
import { closeSpans } from "../../operators/close-spans.js";
import { stepMetadata } from "../../lib/model/step-facts.js";
import { expectValidRun } from "../support/agui.js";
import type { RunItem } from "../../lib/model/kernel-signal.js";
import { BARE_DIGEST_SCAN_UNITS, knownTexts, projectText, replayedPrefixLength, textDigest } from "../../operators/project-text.js";
import { expect } from "@jest/globals";
import { inChain, marbles, synchronousSource } from "../support/marbles.js";

const splitsPair = (text: string, index: number) =>
  index > 0 && /[\ud800-\udbff]/.test(text[index - 1] ?? "") && /[\udc00-\udfff]/.test(text[index] ?? "");
const delta = (text: string, messageId: string | null = "m1"): RunItem => ({
  kind: "text",
  messageId: messageId ?? undefined,
  text,
  source: "delta",
});
const final = (text: string, messageId: string | undefined = "m1"): RunItem => ({ kind: "text", messageId, text, source: "final" });
const history = (text: string): RunItem => ({ kind: "text", messageId: "h1", text, source: "history" });
/** The AG-UI id of kernel message `m` in run r1 (`<runId>:<kernel message>`). */
const id = (m: string) => `r1:${m}`;
const start = (m: string) => ({ type: EventType.TEXT_MESSAGE_START, messageId: id(m), role: "assistant" });
const content = (m: string, d: string) => ({ type: EventType.TEXT_MESSAGE_CONTENT, messageId: id(m), delta: d });
const end = (m: string) => ({ type: EventType.TEXT_MESSAGE_END, messageId: id(m) });
const project = () => projectText({ runId: "r1", newMessageId: () => "assistant-gen" });

describe("projectText", () => {
  it("opens a message on the first delta and sends one CONTENT per delta", () => {
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("a---b", { a: delta("Hel"), b: delta("lo") }).pipe(project())).toBe("(sc)d", {
        s: start("m1"),
        c: content("m1", "Hel"),
        d: content("m1", "lo"),
      });
    });
  });

  it("completes a streamed message on assistantFinal without sending its text again", () => {
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("a---b", { a: delta("Hello"), b: final("Hello") }).pipe(project())).toBe("(sc)e", {
        s: start("m1"),
        c: content("m1", "Hello"),
        e: end("m1"),
      });
    });
  });

  it("sends a message that never streamed as one whole-message triplet", () => {
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("a", { a: final("All at once") }).pipe(project())).toBe("(sce)", {
        s: start("m1"),
        c: content("m1", "All at once"),
        e: end("m1"),
      });
    });
  });

  it("closes the open message before opening another: never two at once", () => {
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("a---b", { a: delta("one", "m1"), b: delta("two", "m2") }).pipe(project())).toBe("(sc)(etd)", {
        s: start("m1"),
        c: content("m1", "one"),
        e: end("m1"),
        t: start("m2"),
        d: content("m2", "two"),
      });
    });
  });

  it("keeps deltas without a message id in the open message, or a generated one", () => {
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("a---b", { a: delta("x", null), b: delta("y", null) }).pipe(project())).toBe("(sc)d", {
        s: start("assistant-gen"),
        c: content("assistant-gen", "x"),
        d: content("assistant-gen", "y"),
      });
    });
  });

  it("shows history text only when nothing streamed in the run", () => {
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("a", { a: history("From history") }).pipe(project())).toBe("(sce)", {
        s: start("h1"),
        c: content("h1", "From history"),
        e: end("h1"),
      });
      expectObservable(cold("ab", { a: delta("live"), b: history("From history") }).pipe(project())).toBe("(sc)", {
        s: start("m1"),
        c: content("m1", "live"),
      });
    });
  });

  it("drops empty text and lets every other item through in order", () => {
    const other: RunItem = { kind: "task-state", state: "working" };
    const event: RunItem = { type: EventType.STEP_STARTED, stepName: "x" };
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const signals = cold("abc|", { a: other, b: delta(""), c: event });
      expectObservable(signals.pipe(project())).toBe("a-c|", { a: other, c: event });
      expectSubscriptions(signals.subscriptions).toBe("^--!");
    });
  });

  it("puts the digest of each message's full text on the run end", () => {
    const runEnd: RunItem = { kind: "run-end", error: undefined, kernelSettled: true };
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("a---b---c----e", { a: delta("Hel"), b: delta("lo"), c: delta("Bye", "m2"), e: runEnd }).pipe(project())).toBe(
        "(sc)d---(etx)y",
        {
          s: start("m1"),
          c: content("m1", "Hel"),
          d: content("m1", "lo"),
          e: end("m1"),
          t: start("m2"),
          x: content("m2", "Bye"),
          y: { ...runEnd, textDigests: [textDigest("Hello"), textDigest("Bye")] },
        } as Record<string, unknown>,
      );
    });
  });
});

describe("projectText: messages of the run, and the turns tool calls end", () => {
  const tool = (status: "started" | "input_complete" | "completed", toolCallId: string, messageId?: string): RunItem => ({
    kind: "tool",
    status,
    toolCallId,
    toolName: "t",
    input: {},
    result: status === "completed" ? "ok" : undefined,
    ...(messageId ? { messageId } : {}),
  });
  const placed = (item: RunItem, parentMessageId: string) => ({ ...item, parentMessageId });

  it("names each message after the run, so two runs never share one", () => {
    const seen: RunItem[] = [];
    synchronousSource([delta("x", "task-message")])
      .source.pipe(projectText({ runId: "run-2" }))
      .subscribe((item) => seen.push(item));
    expect(seen[0]).toEqual({ type: EventType.TEXT_MESSAGE_START, messageId: "run-2:task-message", role: "assistant" });
  });

  it("puts a call in the open text message; its result ends the message, and the kernel's next text is a new one", () => {
    const seen: RunItem[] = [];
    const items = [delta("Deploying."), tool("started", "t1"), tool("completed", "t1"), delta("Done.")];
    synchronousSource(items)
      .source.pipe(project())
      .subscribe((item) => seen.push(item));
    expect(seen).toEqual([
      start("m1"),
      content("m1", "Deploying."),
      placed(items[1]!, id("m1")),
      end("m1"),
      items[2],
      start("m1:after:t1"),
      content("m1:after:t1", "Done."),
    ]);
  });

  it("gathers calls made before any text in one message named after the first; a result starts a new turn", () => {
    const seen: RunItem[] = [];
    const items = [tool("started", "t1"), tool("input_complete", "t2"), tool("completed", "t1"), tool("started", "t3")];
    synchronousSource(items)
      .source.pipe(project())
      .subscribe((item) => seen.push(item));
    expect(seen).toEqual([
      placed(items[0]!, "r1:tool-calls:t1"),
      placed(items[1]!, "r1:tool-calls:t1"),
      items[2],
      placed(items[3]!, "r1:tool-calls:t3"),
    ]);
  });

  it("keeps each pipeline message's turn apart: a candidate's result ends only its own message", () => {
    const pipelineDelta = (text: string, messageId: string): RunItem => ({
      kind: "text",
      messageId,
      text,
      source: "delta",
      pipeline: true,
    });
    const seen: RunItem[] = [];
    const items = [
      pipelineDelta("A", "pm:a"),
      pipelineDelta("B", "pm:b"),
      tool("started", "ta", "pm:a"),
      tool("completed", "ta", "pm:a"),
      pipelineDelta("B2", "pm:b"),
      pipelineDelta("A2", "pm:a"),
    ];
    synchronousSource(items)
      .source.pipe(project())
      .subscribe((item) => seen.push(item));
    expect(seen).toEqual([
      start("pm:a"),
      content("pm:a", "A"),
      start("pm:b"),
      content("pm:b", "B"),
      placed(items[2]!, id("pm:a")),
      end("pm:a"),
      items[3],
      content("pm:b", "B2"),
      start("pm:a:after:ta"),
      content("pm:a:after:ta", "A2"),
    ]);
  });

  it("places thinking beside the message its lane shows, or would show next", () => {
    const thinking = (messageId?: string): RunItem => ({ kind: "reasoning", text: "hm", ...(messageId ? { messageId } : {}) });
    const seen: RunItem[] = [];
    const items = [thinking(), delta("x"), thinking(), tool("completed", "t1"), thinking(), thinking("pm:a")];
    synchronousSource(items)
      .source.pipe(project())
      .subscribe((item) => seen.push(item));
    expect(seen.filter((item) => "kind" in item && item.kind === "reasoning")).toEqual([
      thinking(id("agent")),
      thinking(id("m1")),
      thinking(id("m1:after:t1")),
      thinking(id("pm:a")),
    ]);
  });
});

describe("projectText after a resume", () => {
  const resumed = (known: string[]) =>
    projectText({ runId: "r1", newMessageId: () => "assistant-gen", knownDigests: new Set(known.map(textDigest)) });

  it("sends only the suffix when a message's first text repeats what the client already has", () => {
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(
        cold("a---b", { a: delta("I will deploy. Done: stack created."), b: delta(" Bye") }).pipe(resumed(["I will deploy."])),
      ).toBe("(sc)d", { s: start("m1"), c: content("m1", " Done: stack created."), d: content("m1", " Bye") });
    });
  });

  it("sends nothing for a repeated text with no new suffix, and then streams normally", () => {
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("a---b", { a: delta("Already shown"), b: delta("new") }).pipe(resumed(["Already shown"]))).toBe("----(sc)", {
        s: start("m1"),
        c: content("m1", "new"),
      });
    });
  });

  it("checks only the first text of each message: a later delta equal to old text is new text", () => {
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("a---b", { a: delta("fresh"), b: delta("old") }).pipe(resumed(["old"]))).toBe("(sc)d", {
        s: start("m1"),
        c: content("m1", "fresh"),
        d: content("m1", "old"),
      });
    });
  });
});

describe("replayedPrefixLength", () => {
  it("finds the longest known prefix, counting by characters (UTF-16 length of the prefix)", () => {
    expect(replayedPrefixLength("日本語のテキスト🚀 and more", knownTexts(["日本", "日本語のテキスト🚀"].map(textDigest)))).toBe(
      "日本語のテキスト🚀".length,
    );
    expect(replayedPrefixLength("abc", knownTexts([textDigest("x")]))).toBe(0);
    expect(replayedPrefixLength("abc", knownTexts([]))).toBe(0);
  });
});

/** What the state keeps of a text, computed here from the whole text: SHA-256 of its UTF-8 (a lone surrogate is U+FFFD), then its UTF-16 length. */
const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");
const digestOfWhole = (text: string) => `${sha256(text)}:${text.length}`;

/** Text with astral characters (surrogate pairs), lone halves of pairs, and anything else. */
const anyText = fc
  .array(
    fc.oneof(
      fc.constantFrom("🚀", "𝄞", "日本語", "é", "a", " ", "\n"),
      fc.constantFrom("\ud83d", "\ude80", "\udbff"),
      fc.string({ unit: "binary", maxLength: 8 }),
    ),
    { maxLength: 40 },
  )
  .map((pieces) => pieces.join(""));

/** `text` cut at any UTF-16 indices: pairs are split across pieces as often as not. */
const cutAnywhere = (text: string) =>
  fc.uniqueArray(fc.integer({ min: 1, max: Math.max(1, text.length - 1) }), { maxLength: 12 }).map((cuts) => {
    const at = [0, ...cuts.filter((cut) => cut < text.length).sort((a, b) => a - b), text.length];
    return at.slice(1).map((end, index) => text.slice(at[index], end));
  });

const runEnd: RunItem = { kind: "run-end", error: undefined, kernelSettled: true };
const run = (items: RunItem[], knownDigests: string[] = []) =>
  lastValueFrom(from([...items, runEnd]).pipe(projectText({ runId: "r1", knownDigests }), toArray()));
const shownText = (items: RunItem[]) =>
  items
    .filter((item) => "type" in item && item.type === EventType.TEXT_MESSAGE_CONTENT)
    .map((item) => (item as { delta: string }).delta)
    .join("");
const digestsOn = (items: RunItem[]) => (items.at(-1) as { textDigests?: string[] }).textDigests;

describe("projectText digests, as the text goes out", () => {
  it("gives each message the digest of its whole text, however the deltas cut it (pairs split across deltas too)", async () => {
    await fc.assert(
      fc.asyncProperty(
        anyText.filter((text) => text.length > 0).chain((text) => fc.tuple(fc.constant(text), cutAnywhere(text))),
        anyText.filter((text) => text.length > 0),
        async ([text, pieces], other) => {
          const out = await run([...pieces.map((piece) => delta(piece, "m1")), delta(other, "m2")]);
          expect(digestsOn(out)).toEqual([digestOfWhole(text), digestOfWhole(other)]);
          expect(digestsOn(out)).toEqual([textDigest(text), textDigest(other)]);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("sends, after a resume, only what follows the text the client has, and digests the whole message", async () => {
    await fc.assert(
      fc.asyncProperty(
        anyText.filter((text) => text.length > 0),
        anyText,
        anyText,
        async (before, added, later) => {
          const first = before + added;
          const out = await run([delta(first), ...(later ? [delta(later)] : [])], [textDigest(before), textDigest("unrelated")]);
          // A cut inside a surrogate pair is never a match: the pair would be sent in halves.
          const fresh = splitsPair(first, before.length) ? first : added;
          expect(shownText(out)).toBe(fresh + later);
          expect(digestsOn(out)).toEqual([digestOfWhole(first + later)]);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("finds the longest of several known texts in one long first text", async () => {
    const paragraph = "Deploying stack 🚀 demo-vpc. ".repeat(40_000);
    const out = await run(
      [delta(`${paragraph}Done.`)],
      [textDigest(paragraph.slice(0, 10)), textDigest(paragraph), textDigest(paragraph.slice(0, 500_000)), textDigest("x")],
    );
    expect(shownText(out)).toBe("Done.");
  });

  it("still resumes a state written before lengths were kept (bare digests), within the first BARE_DIGEST_SCAN_UNITS", async () => {
    const before = "I will deploy the 🚀 stack. ";
    const out = await run([delta(`${before}Done.`)], [sha256(before)]);
    expect(shownText(out)).toBe("Done.");
    expect(digestsOn(out)).toEqual([digestOfWhole(`${before}Done.`)]);

    const longer = "x".repeat(BARE_DIGEST_SCAN_UNITS + 1);
    expect(shownText(await run([delta(`${longer}Done.`)], [sha256(longer)]))).toBe(`${longer}Done.`);
    const longest = "y".repeat(BARE_DIGEST_SCAN_UNITS);
    expect(shownText(await run([delta(`${longest}Done.`)], [sha256(longest)]))).toBe("Done.");
  });

  it("lets a bare digest and a digest with its length stand side by side: the longer match wins", async () => {
    const out = await run([delta("one two three")], [sha256("one"), textDigest("one two")]);
    expect(shownText(out)).toBe(" three");
    expect(shownText(await run([delta("one two three")], [sha256("one two"), textDigest("one")]))).toBe(" three");
  });
});

describe("projectText with pipeline text", () => {
  const pipelineDelta = (text: string, messageId: string): RunItem => ({ kind: "text", messageId, text, source: "delta", pipeline: true });

  it("keeps parallel candidates' interleaved text in separate, simultaneously open messages", () => {
    marbles().run(({ cold, expectObservable }) => {
      const items = cold("a---b---c", {
        a: pipelineDelta("A1", "pm:c1"),
        b: pipelineDelta("B1", "pm:c2"),
        c: pipelineDelta("A2", "pm:c1"),
      });
      expectObservable(items.pipe(project())).toBe("(sc)(SC)d", {
        s: start("pm:c1"),
        c: content("pm:c1", "A1"),
        S: start("pm:c2"),
        C: content("pm:c2", "B1"),
        d: content("pm:c1", "A2"),
      });
    });
  });

  it("names pipeline messages, and their tool turns, under the pipeline scope (the execution), the agent's under the run", () => {
    marbles().run(({ cold, expectObservable }) => {
      const tool: RunItem = {
        kind: "tool",
        status: "started",
        toolCallId: "t1",
        toolName: "x",
        input: {},
        result: undefined,
        messageId: "pm:c2",
      };
      const items = cold("a---b---c", { a: pipelineDelta("A1", "pm:c1"), b: tool, c: delta("Agent.") });
      expectObservable(items.pipe(projectText({ runId: "r2", pipelineScope: "exec-1" }))).toBe("(sc)t---(AC)", {
        s: { type: EventType.TEXT_MESSAGE_START, messageId: "exec-1:pm:c1", role: "assistant" },
        c: { type: EventType.TEXT_MESSAGE_CONTENT, messageId: "exec-1:pm:c1", delta: "A1" },
        t: {
          kind: "tool",
          status: "started",
          toolCallId: "t1",
          toolName: "x",
          input: {},
          result: undefined,
          messageId: "pm:c2",
          parentMessageId: "exec-1:tool-calls:t1",
        },
        A: { type: EventType.TEXT_MESSAGE_START, messageId: "r2:m1", role: "assistant" },
        C: { type: EventType.TEXT_MESSAGE_CONTENT, messageId: "r2:m1", delta: "Agent." },
      });
    });
  });

  it("never trims pipeline text as a replay", () => {
    marbles().run(({ cold, expectObservable }) => {
      const items = cold("a", { a: pipelineDelta("Known text", "pm:c1") });
      expectObservable(items.pipe(projectText({ runId: "r1", knownDigests: new Set([textDigest("Known")]) }))).toBe("(sc)", {
        s: start("pm:c1"),
        c: content("pm:c1", "Known text"),
      });
    });
  });
});

describe("projectText closing a step's text at the step's end", () => {
  const pipelineDelta = (text: string, messageId: string): RunItem => ({ kind: "text", messageId, text, source: "delta", pipeline: true });
  /** Kernel messages as `pipelineMessageId` names them: scope, then candidate, candidate step and step run ids. */
  const planMessage = "pipeline-message:step:step-plan-1";
  const draftA = "pipeline-message:candidate_step:cand-a-0-1:cstep-a-draft-1:step-generate-1";
  const draftB = "pipeline-message:candidate_step:cand-b-1-1:cstep-b-draft-1:step-generate-1";
  const stepFinished = (stepName: string, stepRunId: string): RunItem => ({
    type: EventType.STEP_FINISHED,
    stepName,
    metadata: stepMetadata({ schemaVersion: 1, key: stepName, stepId: stepName, stepRunId, outcome: "completed" }),
  });

  it("sends TEXT_MESSAGE_END for the step's message right before its STEP_FINISHED, not at the run's end", () => {
    marbles().run(({ cold, expectObservable }) => {
      const items = cold("a---f", { a: pipelineDelta("Planning", planMessage), f: stepFinished("plan", "step-plan-1") });
      expectObservable(items.pipe(project())).toBe("(sc)(ef)", {
        s: start(planMessage),
        c: content(planMessage, "Planning"),
        e: end(planMessage),
        f: stepFinished("plan", "step-plan-1"),
      });
    });
  });

  it("closes only the finished candidate step's message; the other candidate's stays open until its own step ends", () => {
    marbles().run(({ cold, expectObservable }) => {
      const items = cold("a-----b-----f-----c-----g", {
        a: pipelineDelta("A", draftA),
        b: pipelineDelta("B", draftB),
        f: stepFinished("candidate:a:draft", "cstep-a-draft-1"),
        c: pipelineDelta("B2", draftB),
        g: stepFinished("candidate:b:draft", "cstep-b-draft-1"),
      });
      expectObservable(items.pipe(project())).toBe("(sc)--(SC)--(ef)--d-----(EF)", {
        s: start(draftA),
        c: content(draftA, "A"),
        S: start(draftB),
        C: content(draftB, "B"),
        e: end(draftA),
        f: stepFinished("candidate:a:draft", "cstep-a-draft-1"),
        d: content(draftB, "B2"),
        E: end(draftB),
        F: stepFinished("candidate:b:draft", "cstep-b-draft-1"),
      });
    });
  });

  it("reopens the same message when the step's text goes on after it closed, and the stream stays valid", async () => {
    const items: RunItem[] = [
      pipelineDelta("Asking", planMessage),
      stepFinished("plan", "step-plan-1"),
      { type: EventType.STEP_STARTED, stepName: "plan" },
      pipelineDelta(" and going on", planMessage),
    ];
    const out = await lastValueFrom(from(items).pipe(project(), toArray()));
    const events = out as AGUIEvent[];
    expect(events.map((event) => event.type)).toEqual([
      EventType.TEXT_MESSAGE_START,
      EventType.TEXT_MESSAGE_CONTENT,
      EventType.TEXT_MESSAGE_END,
      EventType.STEP_FINISHED,
      EventType.STEP_STARTED,
      EventType.TEXT_MESSAGE_START,
      EventType.TEXT_MESSAGE_CONTENT,
    ]);
    const run: AGUIEvent[] = [
      { type: EventType.RUN_STARTED, threadId: "t", runId: "r1" },
      { type: EventType.STEP_STARTED, stepName: "plan" },
      ...events,
      { type: EventType.RUN_FINISHED, threadId: "t", runId: "r1", outcome: { type: "success" } },
    ];
    await expectValidRun(await lastValueFrom(from(run).pipe(closeSpans(), toArray())));
  });
});

describe("projectText and its subscription", () => {
  it("should not break unsubscription chain when unsubscribed explicitly", () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const signals = cold("a---b---c|", { a: delta("Hel"), b: delta("lo"), c: final("Hello") });
      expectObservable(signals.pipe(inChain(project())), "^-----!").toBe("(sc)d", {
        s: start("m1"),
        c: content("m1", "Hel"),
        d: content("m1", "lo"),
      });
      expectSubscriptions(signals.subscriptions).toBe("^-----!");
    });
  });

  it("reads a synchronous source, and stops it when the subscriber leaves in the middle of a message's opening", () => {
    const whole = synchronousSource([delta("Hel"), delta("lo"), final("Hello")]);
    const seen: RunItem[] = [];
    whole.source.pipe(project()).subscribe((item) => seen.push(item));
    expect(seen).toEqual([start("m1"), content("m1", "Hel"), content("m1", "lo"), end("m1")]);

    const { source, sent } = synchronousSource([delta("Hel"), delta("lo"), final("Hello")]);
    source.pipe(project(), take(1)).subscribe();
    expect(sent).toEqual([delta("Hel")]);
  });
});
