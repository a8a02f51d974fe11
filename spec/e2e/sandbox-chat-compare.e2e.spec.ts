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
import { describeInBrowser, finished, openSandbox, runFixture, runSection, screenshot, type SandboxPage } from "./browser.js";
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
    expect(box.y).toBeLessThan(list.y + 200);
    await page.locator("#timeline").evaluate((timeline) => timeline.scrollTo(0, 0));
    await screenshot(page, "sandbox-chat", true);

    await runSection(page, 0).getByRole("button", { name: "Chat" }).click();
    expect(await pane.isHidden()).toBe(true);
    expect(sandbox.problems).toEqual([]);
  }, 60_000);

  it("shows an interrupt the run waits on, and text from a run only as text", async () => {
    await page.click("#new-thread");
    await runFixture(page, "permission");
    await finished(runSection(page, 0));
    await runSection(page, 0).getByRole("button", { name: "Chat" }).click();
    const waiting = runSection(page, 0).locator(".chat-interrupt");
    await waiting.waitFor();
    expect(await waiting.locator(".chat-who").textContent()).toMatch(/^waiting for an answer · /);

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
    const opened = runSection(page, 1);
    await opened.locator(".run-title", { hasText: "markup.jsonl" }).waitFor();
    await opened.getByRole("button", { name: "Chat" }).click();
    const text = opened.locator(".chat-list .chat-text");
    await text.waitFor();
    expect(await text.textContent()).toBe(markup);
    expect(await opened.locator(".chat-pane img, .chat-pane b").count()).toBe(0);
    expect(await page.title()).not.toBe("owned");
    expect(sandbox.problems).toEqual([]);
  }, 60_000);
});
