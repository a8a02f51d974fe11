/**
 * The sandbox's chat pane, compare down to payloads, and the pipeline
 * graph's step facts, as a person uses them: open a run's chat beside its
 * events and read what a chat UI showed, compare two runs and see the words
 * and payload fields that changed, click a pipeline step and read its facts.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "@jest/globals";
import type { Message } from "@ag-ui/core";
import type { Page } from "playwright-core";
import { messagesOf } from "../../lib/http/sandbox-bundle/messages-of.js";
import { describeInBrowser, expectPixel, finished, openSandbox, runFixture, runSection, screenshot, type SandboxPage } from "./browser.js";
import { sseEvents } from "./sandbox-run-browser.js";

/** What the pane shows of each message, read from the DOM: who, and the text of its parts in order. */
async function paneItems(page: Page, n: number) {
  return runSection(page, n)
    .locator(".chat-list > li")
    .evaluateAll((items) =>
      items.map((item) => ({
        kind: [...item.classList].find((name) => name.startsWith("role-") || name === "chat-interrupt") ?? "",
        text: item.querySelector(":scope > .chat-text, :scope > details > .chat-text")?.textContent ?? "",
        tools: [...item.querySelectorAll(".chat-tool")].map((tool) => ({
          name: tool.querySelector(".chat-tool-name")?.textContent ?? "",
          result: tool.querySelector(".chat-result")?.textContent ?? null,
        })),
      })),
    );
}

/** What the pane must show for `messages`: one item a message, a tool's result under its call. */
function expectedItems(messages: Message[]) {
  const results = new Map(messages.filter((m) => m.role === "tool").map((m) => [m.toolCallId, m.content]));
  const pretty = (text: string) => {
    try {
      return JSON.stringify(JSON.parse(text), null, 2);
    } catch {
      return text;
    }
  };
  return messages
    .filter(
      (message) =>
        message.role !== "tool" || !messages.some((m) => m.role === "assistant" && m.toolCalls?.some((c) => c.id === message.toolCallId)),
    )
    .map((message) => ({
      kind: `role-${message.role}`,
      text: message.role === "user" || message.role === "assistant" || message.role === "reasoning" ? String(message.content ?? "") : "",
      tools:
        message.role === "assistant"
          ? (message.toolCalls ?? []).map((call) => ({
              name: `tool call · ${call.function.name}`,
              result: results.has(call.id) ? pretty(String(results.get(call.id))) : null,
            }))
          : [],
    }));
}

describeInBrowser("the sandbox's chat pane, compare and step facts in Chromium", () => {
  let sandbox: SandboxPage;
  let page: Page;
  const streams: Promise<string>[] = [];
  const dir = mkdtempSync(path.join(os.tmpdir(), "sandbox-chat-"));

  beforeAll(async () => {
    sandbox = await openSandbox();
    page = sandbox.page;
    page.on("response", (response) => {
      if ((response.headers()["content-type"] ?? "").startsWith("text/event-stream")) streams.push(response.text());
    });
  }, 60_000);
  afterAll(() => sandbox?.close());

  it("shows a run's conversation beside its events, as @ag-ui/client's HttpAgent ends with it", async () => {
    await runFixture(page, "reasoning-tools");
    await finished(runSection(page, 0));
    const events = sseEvents(await streams[0]!);
    const { messages } = await messagesOf(events);
    expect(messages.map((message) => message.role)).toEqual(["user", "reasoning", "assistant", "tool", "assistant", "tool", "assistant"]);

    await runSection(page, 0).getByRole("button", { name: "Chat" }).click();
    const pane = runSection(page, 0).getByRole("region", { name: "Chat of run 1" });
    await pane.locator(".chat-count", { hasText: `${messages.length} messages` }).waitFor();
    expect(await paneItems(page, 0)).toEqual(expectedItems(messages));
    // Beside the events, not under them: the pane's column starts right of the list's.
    const list = (await runSection(page, 0).locator("ol.events").boundingBox())!;
    const box = (await pane.boundingBox())!;
    expect(box.x).toBeGreaterThanOrEqual(list.x + list.width - 1);
    expect(box.y).toBeGreaterThanOrEqual(list.y);
    expect(box.y).toBeLessThan(list.y + list.height);
    await page.locator("#timeline").evaluate((timeline) => timeline.scrollTo(0, 0));
    await screenshot(page, "sandbox-chat", true);

    await runSection(page, 0).getByRole("button", { name: "Chat" }).click();
    expect(await pane.isHidden()).toBe(true);
    expect(sandbox.problems).toEqual([]);
  }, 60_000);

  it("shows an interrupt the run waits on, then the answered run's pane goes on with the conversation", async () => {
    await page.click("#new-thread");
    await page.click("#clear-runs");
    const before = streams.length;
    await runFixture(page, "permission");
    await finished(runSection(page, 0));
    await runSection(page, 0).getByRole("button", { name: "Chat" }).click();
    const waiting = runSection(page, 0).locator(".chat-interrupt");
    await waiting.waitFor();
    expect(await waiting.locator(".chat-who").textContent()).toMatch(/^waiting for an answer · /);

    const form = runSection(page, 0).locator("form.interrupts");
    await form.getByLabel("Allow once").check();
    await form.getByRole("button", { name: "Send answer" }).click();
    const resumed = runSection(page, 1);
    await finished(resumed);
    // As an agent that ran both holds it: the first run's messages, then the answer's.
    const asked = await messagesOf(sseEvents(await streams[before]!));
    const answered = await messagesOf(sseEvents(await streams[before + 1]!), asked.messages);
    expect(answered.messages[0]).toMatchObject({ role: "user", content: "permission" });
    await resumed.getByRole("button", { name: "Chat" }).click();
    await resumed.locator(".chat-count", { hasText: `${answered.messages.length} messages` }).waitFor();
    expect(await paneItems(page, 1)).toEqual(expectedItems(answered.messages));
    expect(await resumed.locator(".chat-interrupt").count()).toBe(0);
    expect(sandbox.problems).toEqual([]);
  }, 60_000);

  it("shows text from a run only as text", async () => {
    // A saved run whose text is markup: the pane shows it as written and runs none of it.
    const markup = "<img src=x onerror=\"document.title='owned'\"><b>bold</b>";
    const file = path.join(dir, "markup.jsonl");
    const saved = [
      { type: "RUN_STARTED", threadId: "t", runId: "r", timestamp: 1 },
      { type: "TEXT_MESSAGE_START", messageId: "m", role: "assistant", timestamp: 2 },
      { type: "TEXT_MESSAGE_CONTENT", messageId: "m", delta: markup, timestamp: 3 },
      { type: "TEXT_MESSAGE_END", messageId: "m", timestamp: 4 },
      { type: "RUN_FINISHED", threadId: "t", runId: "r", timestamp: 5 },
    ];
    writeFileSync(file, saved.map((event) => `${JSON.stringify(event)}\n`).join(""));
    await page.setInputFiles("#open-file", file);
    const opened = runSection(page, 2);
    await opened.locator(".run-title", { hasText: "markup.jsonl" }).waitFor();
    await opened.getByRole("button", { name: "Chat" }).click();
    const text = opened.locator(".chat-list .chat-text");
    await text.waitFor();
    expect(await text.textContent()).toBe(markup);
    expect(await opened.locator(".chat-pane img, .chat-pane b").count()).toBe(0);
    expect(await page.title()).not.toBe("owned");
    expect(sandbox.problems).toEqual([]);
  }, 60_000);

  /** Writes `events` as a saved run and opens it; returns its run section. */
  async function openSaved(name: string, events: unknown[], n: number) {
    const file = path.join(dir, name);
    writeFileSync(file, events.map((event) => `${JSON.stringify(event)}\n`).join(""));
    await page.setInputFiles("#open-file", file);
    const section = runSection(page, n);
    await section.locator(".run-title", { hasText: name }).waitFor();
    return section;
  }

  it("compares two runs down to payloads: the tool argument that changed, and the changed word of a message", async () => {
    const events = sseEvents(await streams[0]!) as Array<Record<string, unknown>>;
    const edited = structuredClone(events);
    const args = edited.find((event) => event.type === "TOOL_CALL_ARGS" && String(event.delta).includes("cn-hangzhou"))!;
    args.delta = String(args.delta).replace("cn-hangzhou", "cn-beijing");
    const text = [...edited].reverse().find((event) => event.type === "TEXT_MESSAGE_CONTENT" && String(event.delta).includes("saved"))!;
    text.delta = String(text.delta).replace("saved", "wrote");
    await openSaved("base.jsonl", events, 3);
    await openSaved("edited.jsonl", edited, 4);

    await page.selectOption("#compare-a", { label: "Run 4 · opened · base.jsonl" });
    await page.selectOption("#compare-b", { label: "Run 5 · opened · edited.jsonl" });
    await page.click("#compare");
    const diff = page.locator("section.run-diff").last();
    await expect(diff.locator(".diff-payload-summary").textContent()).resolves.toBe(
      "1 payload field differs (tool call 1 · mcp__ros__ValidateTemplate · arguments)",
    );
    const payload = diff.locator(".diff-payload");
    await expect(payload.locator("dt").allTextContents()).resolves.toEqual(["/regionId"]);
    await expect(payload.locator("del.diff-word").allTextContents()).resolves.toEqual(["cn-hangzhou"]);
    await expect(payload.locator("ins.diff-word").allTextContents()).resolves.toEqual(["cn-beijing"]);
    // The message: only the word that changed is marked, on each side; the rest reads as it was.
    const message = diff.locator(".diff-text");
    await expect(message.locator("pre.diff-removed del.diff-word").allTextContents()).resolves.toEqual(["saved"]);
    await expect(message.locator("pre.diff-added ins.diff-word").allTextContents()).resolves.toEqual(["wrote"]);
    await expect(message.locator("pre.diff-added").textContent()).resolves.toMatch(/I wrote the plan as/);
    await diff.scrollIntoViewIfNeeded();
    await screenshot(page, "sandbox-compare-payloads", true);
    expect(sandbox.problems).toEqual([]);
  }, 60_000);

  it("opens a pipeline step's facts from its node, with the duration its STEP_FINISHED carries", async () => {
    await page.click("#new-thread");
    await page.click("#clear-runs");
    const before = streams.length;
    await runFixture(page, "pipeline");
    const run = runSection(page, 0);
    await finished(run);
    type StepEvent = { type: string; stepName?: string; metadata?: { "iac-code"?: { step?: Record<string, unknown> } } };
    const events = sseEvents(await streams[before]!) as StepEvent[];
    const planFinished = events.find((event) => event.type === "STEP_FINISHED" && event.stepName === "plan")!;
    const facts = planFinished.metadata!["iac-code"]!.step as { startedAt: string; finishedAt: string; durationMs: number };
    // One rule: the event's duration is its finish minus its start.
    expect(facts.durationMs).toBe(Date.parse(facts.finishedAt) - Date.parse(facts.startedAt));

    await run.locator('.graph-step > .node[data-step="plan"] .node-open').click();
    await expect(page.locator("#inspector-title").textContent()).resolves.toBe("Run 1 · step plan");
    const body = (await page.locator("#inspector-body").textContent())!;
    expect(body).toContain(`started: ${facts.startedAt}`);
    expect(body).toContain(`finished: ${facts.finishedAt}`);
    expect(body).toMatch(
      new RegExp(`^duration: ${facts.durationMs < 1000 ? `${facts.durationMs} ms` : "[\\d.]+ s"} \\(finishedAt − startedAt`, "m"),
    );
    expect(body).toMatch(/^status: done$/m);
    expect(body).toMatch(/^outcome: done$/m);
    expect(body).toMatch(/^messages \(([1-9]\d*)\):$/m);
    expect(await run.locator('.graph-step > .node[data-step="plan"] .node-open').getAttribute("aria-current")).toBe("true");
    await screenshot(page, "sandbox-step-facts", true);
    expect(sandbox.problems).toEqual([]);
  }, 60_000);

  it("draws a step paused on an answer in the waiting colour, which the legend names", async () => {
    await page.click("#new-thread");
    await page.click("#clear-runs");
    await runFixture(page, "pipeline-permission");
    const run = runSection(page, 0);
    await finished(run);
    const deploy = run.locator('.graph-step > .node[data-step="deploy"]');
    await run.locator('.graph-step > .node[data-step="deploy"].waiting').waitFor();
    await expect(deploy.getAttribute("aria-label")).resolves.toBe("deploy: waiting for an answer");
    const legend = run.locator(".graph-legend li");
    await expect(legend.allTextContents()).resolves.toEqual(["pending", "running", "waiting for an answer", "done", "failed", "skipped"]);
    // The graph sits under the chart in the run's short, scrolling Spans box: bring the node into view first.
    await deploy.scrollIntoViewIfNeeded();
    const png = await screenshot(page, "sandbox-pipeline-waiting");
    await expectPixel(png, deploy.locator(".node-status"), [0xf5, 0x9e, 0x0b]);
    await expectPixel(png, legend.nth(2).locator(".legend-swatch"), [0xf5, 0x9e, 0x0b]);
    await deploy.locator(".node-open").click();
    await expect(page.locator("#inspector-body").textContent()).resolves.toMatch(/^status: running, waiting for an answer$/m);
    expect(sandbox.problems).toEqual([]);
  }, 60_000);
});
