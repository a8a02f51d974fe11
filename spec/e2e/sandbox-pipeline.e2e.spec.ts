/**
 * The sandbox's pipeline view, as a person watches a pipeline run: the
 * graph of steps and candidates with each node's status in its colour
 * (checked in the screenshots' pixels), candidates side by side, the span
 * chart's parallel candidates as siblings while they stream, message bars
 * named by their step or candidate, a re-attach explained, and the
 * deployment confirmation offering each choice once.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "@jest/globals";
import type { Locator, Page } from "playwright-core";
import { expectValidRun } from "../support/agui.js";
import { postRun, runInput } from "../support/service.js";
import {
  cssColour,
  depthOf,
  describeInBrowser,
  expectPixel,
  finished,
  openSandbox,
  runFixture,
  runSection,
  screenshot,
  type SandboxPage,
} from "./browser.js";

// Run in the page (inside waitForFunction), where the DOM exists; the specs are typechecked without the DOM lib.
interface PageElement {
  querySelector(selector: string): PageElement | null;
  getAttribute(name: string): string | null;
}
declare const document: { querySelectorAll(selector: string): Iterable<PageElement> };
declare const getComputedStyle: (element: PageElement) => { getPropertyValue(name: string): string };

/** The graph's status colours (lib/http/sandbox/keep.css). */
const COLOUR = {
  pending: [0xcb, 0xd5, 0xe1],
  running: [0x25, 0x63, 0xeb],
  done: [0x16, 0xa3, 0x4a],
  failed: [0xdc, 0x26, 0x26],
  skipped: [0xf1, 0xf5, 0xf9],
} as const;

describeInBrowser("the sandbox's pipeline view in Chromium", () => {
  let sandbox: SandboxPage;
  let page: Page;

  beforeAll(async () => {
    sandbox = await openSandbox();
    page = sandbox.page;
  }, 60_000);
  afterAll(() => sandbox?.close());

  // A new thread on an empty page: New thread keeps the runs, Clear runs removes them, so each case counts from run 0.
  const newThread = async () => {
    await page.click("#new-thread");
    await page.click("#clear-runs");
  };
  const graphOf = (section: Locator) => section.locator(".pipeline-graph");
  const stepNode = (section: Locator, id: string) => graphOf(section).locator(`.graph-step > .node[data-step="${id}"]`);
  /** The graph is drawn on the next animation frame: wait until the step's node shows the status. */
  const nodeReaches = (section: Locator, id: string, status: keyof typeof COLOUR) =>
    graphOf(section).locator(`.graph-step > .node[data-step="${id}"].status-${status}`).waitFor();

  /** The node is in the status, its swatch has the status's colour in CSS and in the screenshot. */
  async function expectNode(png: Awaited<ReturnType<typeof screenshot>>, node: Locator, status: keyof typeof COLOUR) {
    await expect(node.getAttribute("class")).resolves.toContain(`status-${status}`);
    const swatch = node.locator(".node-status");
    expect(await cssColour(swatch)).toEqual(COLOUR[status]);
    await expectPixel(png, swatch, COLOUR[status]);
  }

  it("keeps a parallel step's candidates side by side in the span chart while they stream, and in the graph", async () => {
    await newThread();
    await runFixture(page, "pipeline");
    // While both candidates stream, both of their step bars are open: they must be siblings, not one under the other.
    const depths = await page.waitForFunction(
      () => {
        const rows = [...document.querySelectorAll("section.run .span-row")].filter(
          (row) => row.querySelector(".span-label")?.getAttribute("title")?.startsWith("candidate:") && row.querySelector(".bar.open"),
        );
        return rows.length === 2 ? rows.map((row) => getComputedStyle(row).getPropertyValue("--depth").trim()) : undefined;
      },
      undefined,
      { timeout: 20_000, polling: "raf" },
    );
    const [first, second] = (await depths.jsonValue()) as string[];
    expect(second).toBe(first);

    const run = runSection(page, 0);
    await finished(run);
    await expect(run.locator(".pill").textContent()).resolves.toBe("finished");
    const candidates = graphOf(run).locator(".candidate");
    await expect(candidates.count()).resolves.toBe(2);
    const [a, b] = [(await candidates.nth(0).boundingBox())!, (await candidates.nth(1).boundingBox())!];
    expect(Math.abs(a.y - b.y)).toBeLessThanOrEqual(2);
    expect(b.x).toBeGreaterThanOrEqual(a.x + a.width);
    await expect(candidates.nth(1).getAttribute("class")).resolves.toContain("selected");
    await expect(candidates.nth(0).locator(".node-name").first().textContent()).resolves.toBe("Candidate A: single zone");

    // Each message bar says whose text it is.
    const messageLabels = await run
      .locator(".span-label.kind-message")
      .evaluateAll((labels) => labels.map((label) => label.getAttribute("title")));
    expect(messageLabels).toHaveLength(3);
    expect(messageLabels).not.toContain("assistant");
    expect(messageLabels).toEqual([
      "assistant · plan",
      "assistant · Candidate A: single zone",
      "assistant · Candidate B: two zones behind an SLB",
    ]);
    await expect(run.locator(".span-label.kind-reasoning").getAttribute("title")).resolves.toBe("reasoning · plan");
    // Closed, the candidates are still siblings in the chart.
    const candidateRows = run.locator(".span-row").filter({ has: page.locator('.span-label[title^="candidate:"]') });
    expect(await depthOf(candidateRows.nth(1))).toBe(await depthOf(candidateRows.nth(0)));

    await nodeReaches(run, "generate", "done");
    await graphOf(run).scrollIntoViewIfNeeded();
    const png = await screenshot(page, "sandbox-pipeline-graph", true);
    await expectNode(png, stepNode(run, "plan"), "done");
    await expectNode(png, stepNode(run, "generate"), "done");
    await expectPixel(png, candidates.nth(0).locator(".node-status").first(), COLOUR.done);
    await expectPixel(png, candidates.nth(1).locator(".node-status").first(), COLOUR.done);
  }, 60_000);

  it("draws a failed step in red and the steps it left undone as skipped", async () => {
    await newThread();
    await runFixture(page, "pipeline-failed-step");
    const run = runSection(page, 0);
    await finished(run);
    await nodeReaches(run, "deploy", "skipped");
    await graphOf(run).scrollIntoViewIfNeeded();
    const png = await screenshot(page, "sandbox-pipeline-failed", true);
    await expectNode(png, stepNode(run, "validate"), "failed");
    await expectNode(png, stepNode(run, "deploy"), "skipped");
    await expect(graphOf(run).locator(".graph-caption").textContent()).resolves.toMatch(/failed/);
  }, 60_000);

  it("draws running and pending steps of a run that stopped half way, opened from disk", async () => {
    // A run cut short after its first step started, saved as JSON lines: the graph stops where the run did.
    const { events } = await postRun(sandbox.service.url, runInput("pipeline", {}, { runMode: "pipeline" }));
    await expectValidRun(events);
    const cut = events.findIndex((event) => event.type === "STEP_STARTED") + 1;
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), "sandbox-pipeline-")), "cut-short.jsonl");
    writeFileSync(
      file,
      events
        .slice(0, cut + 2)
        .map((event) => `${JSON.stringify(event)}\n`)
        .join(""),
    );

    await newThread();
    await page.setInputFiles("#open-file", file);
    const run = runSection(page, 0);
    await run.locator(".pill", { hasText: "stream cut short" }).waitFor();
    await nodeReaches(run, "generate", "pending");
    await graphOf(run).scrollIntoViewIfNeeded();
    const png = await screenshot(page, "sandbox-pipeline-running", true);
    await expectNode(png, stepNode(run, "plan"), "running");
    await expectNode(png, stepNode(run, "generate"), "pending");
  }, 60_000);

  it("explains a re-attach: the recovery snapshot row says what it is, and the graph says it was drawn from it", async () => {
    await newThread();
    await page.selectOption("#fixture", "pipeline-drop");
    await page.check("#pipeline");
    await page.click("#run");
    const run = runSection(page, 0);
    await finished(run);
    const row = run.locator(".ev").filter({ hasText: "ACTIVITY_SNAPSHOT" });
    await expect(row.count()).resolves.toBe(1);
    await expect(row.locator(".ev-summary").textContent()).resolves.toMatch(
      /^re-attached: the pipeline as the kernel recovered it \(plan completed, generate running\) · pipeline events to #\d+ already in; the missed events follow$/,
    );
    await nodeReaches(run, "generate", "done");
    await expect(graphOf(run).locator(".graph-caption").textContent()).resolves.toMatch(/re-attached/);
  }, 60_000);

  it("leaves the step that waits for an answer running when the run pauses, and draws the resumed run in plan order", async () => {
    await newThread();
    await runFixture(page, "pipeline-permission");
    const run = runSection(page, 0);
    await finished(run);
    const form = run.locator("form.interrupts");
    await form.waitFor();
    await nodeReaches(run, "validate", "done");
    await nodeReaches(run, "deploy", "running");
    await expect(graphOf(run).locator(".graph-caption").textContent()).resolves.toMatch(/waiting for an answer/);

    // The answer's run opens on the step that waited (reopened), and only then gets the recovery snapshot
    // that knows the step before it: the graph still reads in plan order, as the service's does.
    await form.getByLabel("Allow once").check();
    await form.getByRole("button", { name: "Send answer" }).click();
    const resumed = runSection(page, 1);
    await finished(resumed);
    await nodeReaches(resumed, "deploy", "done");
    const order = await graphOf(resumed)
      .locator(".graph-step > .node")
      .evaluateAll((nodes) => nodes.map((node) => node.getAttribute("data-step")));
    expect(order).toEqual(["validate", "deploy"]);
    await expect(graphOf(resumed).locator(".graph-caption").textContent()).resolves.toMatch(/completed/);
  }, 60_000);

  it("draws the same graph in a view attached to the paused execution, from the service's own read-model", async () => {
    await newThread();
    await runFixture(page, "pipeline-permission");
    const run = runSection(page, 0);
    await finished(run);
    await nodeReaches(run, "deploy", "running");
    // The run's session event filled in the attach form; the execution waits for the permission, so it can be watched.
    await page.click("#attach-panel summary");
    await page.click("#attach");
    const attached = runSection(page, 1);
    await expect(attached.locator(".run-title").textContent()).resolves.toMatch(/^attached · /);
    await finished(attached);
    await nodeReaches(attached, "validate", "done");
    await nodeReaches(attached, "deploy", "running");
    const nodes = (section: Locator) =>
      graphOf(section)
        .locator(".node")
        .evaluateAll((all) => all.map((node) => `${node.getAttribute("data-step")} ${node.getAttribute("class")}`));
    expect(await nodes(attached)).toEqual(await nodes(run));
    await page.click("#attach-panel summary");
  }, 60_000);

  it("offers each choice of a deployment confirmation once", async () => {
    await newThread();
    await runFixture(page, "deploy-confirm");
    const run = runSection(page, 0);
    await finished(run);
    const form = run.locator("form.interrupts");
    await form.waitFor();
    const choices = await form
      .locator('input[type="radio"]')
      .evaluateAll((inputs) =>
        inputs.map((input) => (input as unknown as { labels: { textContent: string }[] }).labels[0]?.textContent?.trim()),
      );
    expect(choices).toEqual([
      expect.stringMatching(/^Deploy now/),
      expect.stringMatching(/^Adjust parameters/),
      expect.stringMatching(/^Cancel/),
    ]);
    await form.getByLabel("Deploy now").check();
    await form.getByRole("button", { name: "Send answer" }).click();
    await finished(runSection(page, 1));
    await expect(runSection(page, 1).locator(".pill").textContent()).resolves.toBe("finished");
  }, 60_000);

  it("logged no script errors or CSP refusals", () => {
    expect(sandbox.problems).toEqual([]);
  });
});
