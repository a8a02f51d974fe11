/**
 * Keep, as a person uses it: save a run (JSON lines, and SSE as received)
 * and read the downloads, open them back from disk, compare two runs, and
 * open a recorded A2A fixture, which the service replays through its own
 * chain (POST /sandbox/replay).
 */
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "@jest/globals";
import type { AGUIEvent } from "@ag-ui/core";
import type { Page } from "playwright-core";
import { FIXTURES_DIR } from "../../lib/paths.js";
import { expectValidRun } from "../support/agui.js";
import { decodeEvents } from "../support/event-streams.js";
import { describeInBrowser, finished, openSandbox, runFixture, runSection, screenshot, type SandboxPage } from "./browser.js";

describeInBrowser("the sandbox's Keep in Chromium", () => {
  let sandbox: SandboxPage;
  let page: Page;
  const dir = mkdtempSync(path.join(os.tmpdir(), "sandbox-keep-"));
  let jsonlFile: string;
  let sseFile: string;

  beforeAll(async () => {
    sandbox = await openSandbox();
    page = sandbox.page;
  }, 60_000);
  afterAll(() => sandbox?.close());

  const typesOf = (n: number) => runSection(page, n).locator(".ev-type").allTextContents();

  /** Clicks a run's button and returns the file the browser downloaded: its suggested name and text. */
  async function save(n: number, button: string) {
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      runSection(page, n).getByRole("button", { name: button }).click(),
    ]);
    const file = path.join(dir, download.suggestedFilename());
    await download.saveAs(file);
    return { name: download.suggestedFilename(), file, text: readFileSync(file, "utf8") };
  }

  it("saves a run as JSON lines and as the SSE it received, each a valid AG-UI run", async () => {
    await runFixture(page, "reasoning-tools");
    await finished(runSection(page, 0));

    const jsonl = await save(0, "Save JSONL");
    expect(jsonl.name).toBe("run-1-reasoning-tools.jsonl");
    const events = jsonl.text
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as AGUIEvent);
    await expectValidRun(events);
    expect(events.map((event) => event.type)).toEqual(await typesOf(0));

    const sse = await save(0, "Save SSE");
    expect(sse.name).toBe("run-1-reasoning-tools.sse");
    expect(sse.text.startsWith("data: {")).toBe(true);
    const decoded = await decodeEvents(sse.text, "text/event-stream");
    await expectValidRun(decoded);
    expect(decoded).toEqual(events);
    jsonlFile = jsonl.file;
    sseFile = sse.file;
  }, 60_000);

  it("opens a saved run back from disk, either format, as a run like the one saved", async () => {
    await page.setInputFiles("#open-file", jsonlFile);
    await runSection(page, 1).locator(".run-title", { hasText: "opened · run-1-reasoning-tools.jsonl" }).waitFor();
    await page.setInputFiles("#open-file", sseFile);
    await runSection(page, 2).locator(".run-title", { hasText: "opened · run-1-reasoning-tools.sse" }).waitFor();
    const live = await typesOf(0);
    expect(await typesOf(1)).toEqual(live);
    expect(await typesOf(2)).toEqual(live);
    for (const n of [1, 2]) {
      await expect(runSection(page, n).locator(".pill").textContent()).resolves.toBe("finished");
      expect(await runSection(page, n).locator(".bar").count()).toBe(await runSection(page, 0).locator(".bar").count());
    }
  }, 60_000);

  it("compares two runs: alike, then with an event gone and a message's text changed", async () => {
    await page.selectOption("#compare-a", { label: "Run 1 · reasoning-tools" });
    await page.selectOption("#compare-b", { label: "Run 2 · opened · run-1-reasoning-tools.jsonl" });
    await page.click("#compare");
    const same = page.locator("section.run-diff").last();
    await expect(same.locator(".diff-summary").textContent()).resolves.toMatch(/^Same event types in the same order, and the same text/);

    // The same run with its failed tool's result gone and its answer reworded.
    const events = readFileSync(jsonlFile, "utf8")
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const lastOf = (list: Record<string, unknown>[], type: string) => list.map((event) => event.type).lastIndexOf(type);
    const failedResult = lastOf(events, "TOOL_CALL_RESULT");
    const edited = events.filter((_, index) => index !== failedResult);
    const answer = edited[lastOf(edited, "TEXT_MESSAGE_CONTENT")]!;
    answer.delta = "Something else entirely.";
    const editedFile = path.join(dir, "edited.jsonl");
    writeFileSync(editedFile, edited.map((event) => `${JSON.stringify(event)}\n`).join(""));
    await page.setInputFiles("#open-file", editedFile);
    await runSection(page, 3).locator(".run-title", { hasText: "edited.jsonl" }).waitFor();

    await page.selectOption("#compare-a", { label: "Run 1 · reasoning-tools" });
    await page.selectOption("#compare-b", { label: "Run 4 · opened · edited.jsonl" });
    await page.click("#compare");
    const diff = page.locator("section.run-diff").last();
    await expect(diff.locator(".diff-summary").textContent()).resolves.toMatch(
      /^\d+ events alike · 1 only in Run 1 · 0 only in Run 4 · 1 message text differs$/,
    );
    await expect(diff.locator(".diff-row.diff-removed").allTextContents()).resolves.toEqual([expect.stringMatching(/TOOL_CALL_RESULT$/)]);
    await expect(diff.locator(".diff-text pre.diff-added").textContent()).resolves.toContain("Something else entirely.");
    await diff.scrollIntoViewIfNeeded();
    await screenshot(page, "sandbox-keep-diff", true);
  }, 60_000);

  it("replays a recorded A2A fixture opened from disk through the service, with its pipeline graph", async () => {
    await page.click("#new-thread");
    await page.click("#clear-runs");
    // A recording as recorder mode writes it; its name is nothing the kernel knows.
    const recording = path.join(dir, "20260312-081405-ab346610.jsonl");
    copyFileSync(path.join(FIXTURES_DIR, "pipeline.jsonl"), recording);
    await page.setInputFiles("#open-file", recording);
    const run = runSection(page, 0);
    await run.locator(".run-title", { hasText: "replay · 20260312-081405-ab346610.jsonl" }).waitFor();
    await finished(run);
    await expect(run.locator(".pill").textContent()).resolves.toBe("finished");
    const types = await typesOf(0);
    expect(types).toEqual(expect.arrayContaining(["RUN_STARTED", "STEP_STARTED", "TEXT_MESSAGE_CONTENT", "STEP_FINISHED", "RUN_FINISHED"]));
    await run.locator(".pipeline-graph .candidate").nth(1).waitFor();
    await expect(run.locator(".pipeline-graph .candidate").count()).resolves.toBe(2);
    // No answer form for a replay: there is no task behind it to resume.
    await expect(run.locator("form.interrupts").count()).resolves.toBe(0);
    await screenshot(page, "sandbox-keep-replay", true);
  }, 60_000);

  it("goes on with a replayed fixture's next turn, picked as an answer would pick it", async () => {
    await page.click("#new-thread");
    await page.click("#clear-runs");
    const recording = path.join(dir, "permission-recording.jsonl");
    copyFileSync(path.join(FIXTURES_DIR, "permission.jsonl"), recording);
    await page.setInputFiles("#open-file", recording);
    const paused = runSection(page, 0);
    await finished(paused);
    await expect(paused.locator(".pill").textContent()).resolves.toBe("waiting for an answer");
    const turns = paused.locator(".replay-turns button");
    await turns.nth(1).waitFor();
    await expect(turns.allTextContents()).resolves.toEqual(["Replay turn 1 · Allow once", "Replay turn 1 · Deny"]);
    await turns.filter({ hasText: "deny" }).click();
    const denied = runSection(page, 1);
    await denied.locator(".run-title", { hasText: "turn 1 · Deny" }).waitFor();
    await finished(denied);
    await expect(denied.locator(".pill").textContent()).resolves.toBe("finished");
    await expect(denied.locator(".ev-type", { hasText: "TOOL_CALL_RESULT" }).count()).resolves.toBe(1);
  }, 60_000);

  it("says so when a file is neither a saved run nor a fixture", async () => {
    const junk = path.join(dir, "notes.txt");
    writeFileSync(junk, "just some notes\n");
    const runs = await page.locator("section.run").count();
    await page.setInputFiles("#open-file", junk);
    await page.locator("#status", { hasText: /^notes\.txt: this is neither a saved run/ }).waitFor({ state: "attached" });
    await expect(page.locator("section.run").count()).resolves.toBe(runs);
  });

  it("logged no script errors or CSP refusals", () => {
    expect(sandbox.problems).toEqual([]);
  });
});
