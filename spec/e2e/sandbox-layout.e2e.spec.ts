/**
 * The sandbox read as a person meets it, at 1280×800 in headless Chromium:
 * names for people (spans, interrupt forms, run titles, fixture lines, the
 * language picker), the room the events get (the chart and graph kept
 * short and foldable, editors over the page, a top bar on one line), find
 * that narrows the charts and takes regular expressions, and a time axis
 * that hatches only the gaps that stand out and marks where a stream broke.
 * Sizes are measured in the browser (bounding boxes), not eyeballed.
 */
import { readdirSync, writeFileSync, mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "@jest/globals";
import type { Locator, Page } from "playwright-core";
import { LOCALES_DIR } from "../../lib/paths.js";
import { expectValidRun } from "../support/agui.js";
import { describeInBrowser, finished, openSandbox, runFixture, runSection, screenshot, VIEWPORT, type SandboxPage } from "./browser.js";
import { sseEvents } from "./sandbox-run-browser.js";

// Runs in the page (inside evaluate), where the DOM exists; the specs are typechecked without the DOM lib.
declare const document: {
  documentElement: { scrollWidth: number };
  elementFromPoint(x: number, y: number): { id: string } | null;
  activeElement: { textContent: string | null } | null;
};

/** Each locale file's language, as a person who reads it names it. */
const LANGUAGE_NAMES: Record<string, string> = {
  de: "Deutsch",
  en: "English",
  es: "Español",
  fr: "Français",
  ja: "日本語",
  pt: "Português",
  zh: "中文",
};

describeInBrowser("the sandbox's labels, layout, find and time axis in Chromium", () => {
  let sandbox: SandboxPage;
  let page: Page;
  const posts: Array<{ forwardedProps: { iacCode: { preferredLanguage?: string } } }> = [];
  /** Streamed answers, with whether the page let them run to their end (Stop cuts one on purpose). */
  const streams: Array<{ body: Promise<string> }> = [];
  const dir = mkdtempSync(path.join(os.tmpdir(), "sandbox-layout-"));

  beforeAll(async () => {
    sandbox = await openSandbox();
    page = sandbox.page;
    page.on("request", (request) => {
      if (request.method() === "POST" && new URL(request.url()).pathname === "/") posts.push(JSON.parse(request.postData() ?? "null"));
    });
    page.on("response", (response) => {
      if ((response.headers()["content-type"] ?? "").startsWith("text/event-stream"))
        streams.push({ body: response.text().catch(() => "") });
    });
  }, 60_000);
  afterAll(() => sandbox?.close());

  // A new thread on an empty page: New thread keeps the runs, Clear runs removes them, so each case counts from run 0.
  const newThread = async () => {
    await page.click("#new-thread");
    await page.click("#clear-runs");
  };
  const box = async (locator: Locator) => (await locator.boundingBox())!;
  const visibleRuns = () => page.locator("section.run:not([hidden])");
  const scrollTimelineTo = (top: number) => page.locator("#timeline").evaluate((timeline, at) => (timeline.scrollTop = at), top);

  it("names things for people: fixture lines, languages, spans, interrupt forms and run titles", async () => {
    await page.selectOption("#fixture", "permission");
    // One line on the page, the whole comment in its tooltip.
    await expect(page.textContent("#fixture-description")).resolves.toBe("A permission interrupt.");
    await expect(page.getAttribute("#fixture-description", "title")).resolves.toMatch(/plays the section whose "when" is in the answer\.$/);
    expect((await box(page.locator("#fixture-description"))).height).toBeLessThanOrEqual(22);

    // Every locale the service has, each in its own language.
    const locales = readdirSync(LOCALES_DIR)
      .filter((file) => file.endsWith(".json"))
      .map((file) => path.basename(file, ".json"))
      .sort();
    expect(locales).toHaveLength(7);
    const offered = await page
      .locator("#language option:not([value=''])")
      .evaluateAll((options) => options.map((option) => [option.getAttribute("value"), option.getAttribute("lang"), option.textContent]));
    expect(offered.map(([value]) => value).sort()).toEqual(locales);
    for (const [value, lang, text] of offered) expect([lang, text]).toEqual([value, LANGUAGE_NAMES[value!]]);

    // The language picked is the one sent.
    await page.click(".settings summary");
    await page.selectOption("#language", { label: "日本語" });
    await page.keyboard.press("Escape");
    await runFixture(page, "reasoning-tools");
    const run = runSection(page, 0);
    await finished(run);
    expect(posts.at(-1)!.forwardedProps.iacCode.preferredLanguage).toBe("ja");
    await page.click(".settings summary");
    await page.selectOption("#language", "");
    await page.keyboard.press("Escape");

    // Span names say what a span is; an id is never cut in the middle, and stays in the tooltip.
    const spans = await run
      .locator(".span-rows .span-label")
      .evaluateAll((labels) =>
        labels.map((label) => ({ name: label.querySelector(".name")?.textContent ?? "", id: label.getAttribute("title") ?? "" })),
      );
    expect(spans.map((span) => span.name)).toEqual(
      expect.arrayContaining(["Reasoning", "Tool: ValidateTemplate (ros)", "Tool: Bash", "Text (assistant)"]),
    );
    for (const span of spans) expect(span.name).not.toMatch(/…/);
    const reasoning = spans.find((span) => span.name === "Reasoning")!;
    expect(reasoning.id).not.toBe("Reasoning");
    expect(reasoning.id.length).toBeGreaterThan(8); // the message id the row used to show, cut

    // An interrupt form in words: the options' titles, the facts by what they are, no raw keys or values on screen.
    await runFixture(page, "permission");
    const asked = runSection(page, 1);
    await finished(asked);
    const form = asked.locator("form.interrupts");
    await form.waitFor();
    await expect(form.locator("label.radio").allInnerTexts()).resolves.toEqual(["Allow once", "Deny"]);
    const facts = await form.locator(".facts dt").allTextContents();
    expect(facts.length).toBeGreaterThan(0);
    for (const fact of facts) expect(fact).toMatch(/^[A-Z][a-z]+( [a-z]+)*$/);
    const formText = await form.locator("fieldset.interrupt").evaluate((fieldset) => {
      const clone = fieldset.cloneNode(true) as typeof fieldset;
      clone.querySelector("details.raw")?.remove();
      return clone.textContent ?? "";
    });
    expect(formText).not.toMatch(/allow_once|safeSummary|decision/);
    await form.getByLabel("Allow once").check();
    await form.getByRole("button", { name: "Send answer" }).click();
    await finished(runSection(page, 2));
    await expect(form.locator("h3").textContent()).resolves.toBe("Answered: Allow once");
    await expect(runSection(page, 2).locator(".run-title").textContent()).resolves.toBe("resume · Allow once");
    for (const title of await page.locator(".run-title").allTextContents()) expect(title).not.toMatch(/[{}"]/);
  }, 90_000);

  it("leaves the events the upper half of a 1280×800 window: a short, foldable chart and graph, editors over the page, one top bar line", async () => {
    expect(page.viewportSize()).toEqual(VIEWPORT);
    await newThread();
    await runFixture(page, "pipeline");
    const run = runSection(page, 0);
    await finished(run);
    await run.locator(".run-top .pipeline-graph:not([hidden])").waitFor();

    // Nothing wider than the window, and the top bar on one line.
    await expect(page.evaluate(() => document.documentElement.scrollWidth)).resolves.toBeLessThanOrEqual(VIEWPORT.width);
    const bar = await box(page.locator(".topbar"));
    expect(bar.height).toBeLessThanOrEqual(40);
    for (const part of ["h1", "#service", "#keep"]) {
      const child = await box(page.locator(`.topbar ${part}`));
      expect(child.y).toBeGreaterThanOrEqual(bar.y);
      expect(child.y + child.height).toBeLessThanOrEqual(bar.y + bar.height + 0.5);
      expect(child.x + child.width).toBeLessThanOrEqual(VIEWPORT.width);
    }

    // The chart and the pipeline graph share one short, scrolling box; the events start in the upper half.
    await scrollTimelineTo(0);
    const charts = await box(run.locator(".run-top"));
    expect(charts.height).toBeLessThanOrEqual(200);
    const firstEvent = await box(run.locator('.ev[data-index="0"]'));
    expect(firstEvent.y).toBeLessThan(VIEWPORT.height / 2);
    await screenshot(page, "sandbox-layout", true);

    // Folded, the chart is one line, and the events move up under it.
    await run.locator(".run-top > summary").click();
    expect((await box(run.locator(".run-top"))).height).toBeLessThanOrEqual(30);
    expect((await box(run.locator('.ev[data-index="0"]'))).y).toBeLessThan(firstEvent.y - 100);
    await run.locator(".run-top > summary").click();
    expect((await box(run.locator(".run-top"))).height).toBeGreaterThan(100);

    // An editor opens over the page: the timeline does not move, and the editor is on top where it is drawn.
    for (const [summary, field] of [
      ["#raw-editor summary", "#raw-input"],
      [".settings summary", "#cwd"],
      ["#attach-panel summary", "#attach-execution"],
    ] as const) {
      const before = await box(page.locator("#timeline"));
      await page.click(summary);
      const editor = await box(page.locator(field));
      expect(await box(page.locator("#timeline"))).toEqual(before);
      expect(editor.x + editor.width).toBeLessThanOrEqual(VIEWPORT.width);
      const onTop = await page.evaluate(
        ([x, y]) => document.elementFromPoint(x!, y!)?.id,
        [editor.x + editor.width / 2, editor.y + editor.height / 2],
      );
      expect(onTop).toBe(field.slice(1));
      if (field === "#raw-input") {
        await page.click("#raw-fill");
        await screenshot(page, "sandbox-raw-editor", true);
      }
      // Escape closes it and gives focus back to its summary.
      await page.focus(field);
      await page.keyboard.press("Escape");
      await expect(page.locator(field).isVisible()).resolves.toBe(false);
      await expect(page.evaluate(() => document.activeElement?.textContent)).resolves.toBe(await page.textContent(summary));
    }
  }, 90_000);

  it("narrows the charts as well as the rows, hides runs with nothing found, and takes regular expressions", async () => {
    await newThread();
    await runFixture(page, "chat");
    await finished(runSection(page, 0));
    await runFixture(page, "reasoning-tools");
    const tools = runSection(page, 1);
    await finished(tools);
    const rows = await tools.locator(".ev").count();

    // A name only the second run has: the first is hidden, chart and all, and the page says so.
    await page.fill("#find-name", "ValidateTemplate");
    await expect(visibleRuns().count()).resolves.toBe(1);
    await expect(runSection(page, 0).isVisible()).resolves.toBe(false);
    await expect(page.locator(".filter-note").textContent()).resolves.toBe("1 run with no matching event hidden: Clear shows it.");
    // In the chart, the tool's own spans stand out; the rest step back.
    const undimmed = await tools.locator(".span-row:not(.dim):not(.ticks):not(.axis-row) .name").allTextContents();
    expect(undimmed.length).toBeGreaterThan(0);
    for (const name of undimmed) expect(name).toBe("Tool: ValidateTemplate (ros)");
    expect(await tools.locator(".span-row.dim").count()).toBeGreaterThan(0);

    // As plain text "template$" is nowhere; as a regular expression it is the end of a tool's name.
    await page.fill("#find-name", "template$");
    await expect(visibleRuns().count()).resolves.toBe(0);
    await expect(page.locator(".filter-note").textContent()).resolves.toBe("2 runs with no matching event hidden: Clear shows them.");
    await page.check("#find-regex");
    await expect(visibleRuns().count()).resolves.toBe(1);
    const found = await tools.locator(".ev").count();
    expect(found).toBeGreaterThan(0);
    expect(found).toBeLessThan(rows);

    // A pattern that does not compile says so on screen, and leaves the list as it was.
    await page.fill("#find-name", "template$(");
    const error = page.locator("#find-error");
    await expect(error.textContent()).resolves.toMatch(/^Not a regular expression: /);
    const shown = await box(error);
    expect(shown.height).toBeGreaterThan(8);
    expect(shown.y + shown.height).toBeLessThanOrEqual(VIEWPORT.height);
    await expect(page.getAttribute("#find-name", "aria-invalid")).resolves.toBe("true");
    await expect(tools.locator(".ev").count()).resolves.toBe(found);
    await screenshot(page, "sandbox-find-regex", true);

    await page.click("#find-clear");
    await page.uncheck("#find-regex");
    await expect(visibleRuns().count()).resolves.toBe(2);
    await expect(error.isVisible()).resolves.toBe(false);
    await expect(page.locator(".filter-note").isVisible()).resolves.toBe(false);
    await expect(page.locator(".span-row.dim").count()).resolves.toBe(0);
    await expect(tools.locator(".ev").count()).resolves.toBe(rows);
  }, 90_000);

  it("hatches only the gaps that stand out, with a legend, and marks where a stream broke", async () => {
    // Rows are read below: no find left over from a test that failed half way.
    await page.uncheck("#find-regex");
    if (await page.isEnabled("#find-clear")) await page.click("#find-clear");
    // reasoning-tools (the last run) pauses 300 ms among events some 40 ms apart: that silence stands out.
    const tools = runSection(page, 1);
    await expect(tools.locator(".axis-gap").count()).resolves.toBeGreaterThan(0);
    await expect(tools.locator(".axis-legend").textContent()).resolves.toMatch(/^silence ≥ 4× the stream's typical spacing \(\d+ ms\)/);

    // slow-chat streams a delta every 200 ms: a steady pace has nothing to hatch. Stopped part way, it is marked so.
    await newThread();
    await runFixture(page, "slow-chat");
    const slow = runSection(page, 0);
    await slow.locator(".ev-type", { hasText: "TEXT_MESSAGE_CONTENT" }).nth(6).waitFor();
    await page.click("#stop");
    await slow.locator(".pill", { hasText: "stopped" }).waitFor();
    await expect(slow.locator(".axis-gap").count()).resolves.toBe(0);
    await expect(slow.locator(".axis-break.break-stopped").textContent()).resolves.toBe("stopped");
    await expect(slow.locator(".axis-legend").textContent()).resolves.toMatch(/stopped from the page after #\d+/);

    // A run that ends in RUN_ERROR is marked where the error came.
    await runFixture(page, "failing-run");
    const failing = runSection(page, 1);
    await finished(failing);
    await expect(failing.locator(".axis-break.break-error").textContent()).resolves.toBe("error");
    // The kernel's own reason, the RUN_ERROR's detail, is shown beside the reference sentence: on the mark and in the status line.
    const reason = "quota exceeded (HTTP 429)";
    await expect(failing.locator(".axis-break.break-error").getAttribute("title")).resolves.toContain(reason);
    await expect(page.locator("#status").textContent()).resolves.toContain(reason);

    // A stream that dropped (a saved run that stops before RUN_FINISHED) gets its mark at the end of the axis.
    const events = sseEvents(await streams.at(-1)!.body).slice(0, 6);
    const file = path.join(dir, "dropped.jsonl");
    writeFileSync(file, events.map((event) => JSON.stringify(event)).join("\n") + "\n");
    await page.setInputFiles("#open-file", file);
    const dropped = runSection(page, 2);
    await dropped.locator(".pill", { hasText: "stream cut short" }).waitFor();
    const mark = dropped.locator(".axis-break.break-dropped");
    await expect(mark.textContent()).resolves.toBe("dropped");
    const [axis, drawn] = [await box(dropped.locator(".track.axis")), await box(mark)];
    expect(Math.abs(drawn.x + drawn.width / 2 - (axis.x + axis.width))).toBeLessThanOrEqual(3);
    await expect(dropped.locator(".axis-legend").textContent()).resolves.toMatch(/stream dropped after #5/);
    await dropped.locator(".run-top").scrollIntoViewIfNeeded();
    await screenshot(page, "sandbox-time-breaks", true);
  }, 90_000);

  it("received only streams that pass the AG-UI checks, and logged no script errors or CSP refusals", async () => {
    const bodies = await Promise.all(streams.map((stream) => stream.body));
    // The one stopped from the page ends where it was cut; every other stream is whole.
    const whole = bodies.map((body) => sseEvents(body)).filter((events) => events.length > 0);
    const complete = whole.filter((events) => /^RUN_(FINISHED|ERROR)$/.test(String((events.at(-1) as { type?: string }).type)));
    expect(whole.length - complete.length).toBeLessThanOrEqual(1);
    expect(complete.length).toBeGreaterThanOrEqual(6);
    for (const events of complete) await expectValidRun(events);
    expect(sandbox.problems).toEqual([]);
  }, 60_000);
});
