/**
 * The sandbox page end to end, as a person uses it: the real service with
 * its embedded demo kernel (fixtures replayed at their recorded pace), and
 * Debian's Chromium, headless, driven by playwright-core.
 *
 * CI installs Chromium (`.ci/run`), so there a missing browser fails the
 * suite; on a developer machine without it the suite is skipped, saying so.
 * Screenshots land outside the checkout, in the folder `SCREENSHOTS` names
 * (browser.ts), to look at.
 */
import { mkdirSync } from "node:fs";
import { afterAll, beforeAll, expect, it } from "@jest/globals";
import type { Browser, Locator, Page } from "playwright-core";
import { startService, type RunningService } from "../../lib/server.js";
import type { ValidRunInput } from "../../lib/model/run-input.js";
import { testConfig } from "../support/service.js";
import { collectProblems, describeInBrowser, launchChromium, screenshot, SCREENSHOTS, STREAM_TIMEOUT, VIEWPORT } from "./browser.js";
import { expectDrawn } from "./sandbox-run-browser.js";

// Runs in the page (inside page.evaluate), where the DOM exists; the specs are typechecked without the DOM lib.
declare const getComputedStyle: (element: unknown) => { backgroundColor: string; getPropertyValue(name: string): string };

describeInBrowser("the sandbox page in Chromium", () => {
  let service: RunningService;
  let browser: Browser;
  let page: Page;
  const problems: string[] = [];
  // The run inputs the page POSTs; the service refuses any that is not a ValidRunInput.
  const posts: ValidRunInput[] = [];

  beforeAll(async () => {
    service = await startService(testConfig({ a2aUrl: undefined }));
    browser = await launchChromium();
    page = await browser.newPage({ viewport: VIEWPORT });
    collectProblems(page, problems);
    page.on("request", (request) => {
      if (request.method() === "POST" && new URL(request.url()).pathname === "/")
        posts.push(JSON.parse(request.postData() ?? "null") as ValidRunInput);
    });
    mkdirSync(SCREENSHOTS, { recursive: true });
    await page.goto(`${service.url}/sandbox`);
    await page.locator("#run:enabled").waitFor();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await service?.close();
  });

  const run = (n: number) => page.locator("section.run").nth(n);
  const finished = (section: Locator) =>
    section
      .locator(".ev-type")
      .filter({ hasText: /^RUN_(FINISHED|ERROR)$/ })
      .waitFor({ timeout: STREAM_TIMEOUT });

  async function start(fixture: string) {
    await page.selectOption("#fixture", fixture);
    await page.click("#run");
  }

  it("lists the fixtures with their descriptions and ticks the pipeline box for pipeline fixtures", async () => {
    const names = await page.locator("#fixture option").allTextContents();
    expect(names).toEqual(expect.arrayContaining(["chat", "permission", "pipeline", "reasoning-tools"]));
    await page.selectOption("#fixture", "pipeline");
    expect(await page.isChecked("#pipeline")).toBe(true);
    await page.selectOption("#fixture", "reasoning-tools");
    expect(await page.isChecked("#pipeline")).toBe(false);
    expect(await page.textContent("#fixture-description")).toMatch(/^Thinking, an MCP tool call/);
  });

  it("streams reasoning-tools into the timeline and draws its spans", async () => {
    await start("reasoning-tools");
    await finished(run(0));
    await expect(run(0).locator(".pill").textContent()).resolves.toBe("finished");
    const types = await run(0).locator(".ev-type").allTextContents();
    expect(types[0]).toBe("RUN_STARTED");
    expect(types.at(-1)).toBe("RUN_FINISHED");
    expect(types).toEqual(expect.arrayContaining(["REASONING_START", "TOOL_CALL_START", "TOOL_CALL_RESULT", "TEXT_MESSAGE_CONTENT"]));

    const bars = run(0).locator(".bar");
    expect(await bars.count()).toBe(4);
    expect(await run(0).locator(".bar.kind-reasoning").count()).toBe(1);
    expect(await run(0).locator(".bar.kind-tool").count()).toBe(2);
    expect(await run(0).locator(".bar.kind-tool.failed").count()).toBe(1);
    expect(await run(0).locator(".bar.kind-message").count()).toBe(1);
    expect(await run(0).locator(".bar.open").count()).toBe(0);

    // An event's JSON, on click and by keyboard.
    await run(0).locator(".ev").last().click();
    expect(JSON.parse((await page.textContent("#inspector-body"))!)).toMatchObject({ type: "RUN_FINISHED", outcome: { type: "success" } });
    await page.keyboard.press("ArrowUp");
    expect(JSON.parse((await page.textContent("#inspector-body"))!)).toMatchObject({ type: "TEXT_MESSAGE_END" });
    await run(0).locator(".bar.kind-tool").first().click();
    // Named for people in the title; the tool's own name is in the span's facts.
    expect(await page.textContent("#inspector-title")).toMatch(/Tool: ValidateTemplate \(ros\)/);
    expect(await page.textContent("#inspector-body")).toContain("label: mcp__ros__ValidateTemplate");

    await page.locator("#timeline").evaluate((timeline) => (timeline.scrollTop = 0));
    const png = await screenshot(page, "sandbox-reasoning-tools");
    await expectDrawn(png, run(0).locator(".bar.kind-reasoning"));
    await expectDrawn(png, run(0).locator(".bar.kind-message"));
  }, 60_000);

  it("marks the CUSTOM iac-code.pipeline.v1 events of a pipeline run with their eventType", async () => {
    await start("pipeline");
    await finished(run(1));
    const body = posts.at(-1)!;
    expect(body.forwardedProps.iacCode.runMode).toBe("pipeline");
    const pipelineTypes = await run(1).locator(".ev-sub.pipeline").allTextContents();
    expect(pipelineTypes).toEqual(expect.arrayContaining(["pipeline_started", "candidate_started", "candidate_selected"]));
    expect(await run(1).locator(".tick").count()).toBe(pipelineTypes.length);
    expect(await run(1).locator(".bar.kind-step").count()).toBeGreaterThanOrEqual(4);
    // A step's duration on the chart is the feed's one rule, finishedAt − startedAt (plan: 05.170 → 05.625), as in its events.
    const plan = run(1)
      .locator(".span-row")
      .filter({ has: page.locator(".span-label.kind-step .name", { hasText: /^Step: plan$/ }) });
    expect(await plan.locator(".took").textContent()).toBe("455 ms");
    // Events inside a step are indented under it.
    const depth = await run(1)
      .locator(".ev")
      .filter({ hasText: "REASONING_START" })
      .first()
      .evaluate((row) => getComputedStyle(row).getPropertyValue("--depth"));
    expect(depth.trim()).toBe("1");
  }, 60_000);

  it("answers a permission interrupt through the form built from its responseSchema and shows the resumed run", async () => {
    const before = await page.textContent("#thread-id");
    await page.click("#new-thread");
    expect(await page.textContent("#thread-id")).not.toBe(before);
    await page.click("#clear-runs");
    expect(await page.locator("section.run").count()).toBe(0);

    await start("permission");
    await finished(run(0));
    const form = run(0).locator("form.interrupts");
    await form.waitFor();
    await expect(run(0).locator(".pill").textContent()).resolves.toBe("waiting for an answer");
    expect(await form.locator("legend").first().textContent()).toBe("Deploy ROS stack demo-vpc-ecs");
    await form.getByLabel("Allow once").check();
    await form.getByRole("button", { name: "Send answer" }).click();

    await finished(run(1));
    await expect(run(1).locator(".pill").textContent()).resolves.toBe("finished");
    await expect(run(0).locator(".pill").textContent()).resolves.toBe("answered");
    expect(await form.locator("h3").textContent()).toBe("Answered: Allow once");
    expect(await run(1).locator(".ev-type").allTextContents()).toEqual(
      expect.arrayContaining(["TOOL_CALL_RESULT", "TEXT_MESSAGE_CONTENT", "RUN_FINISHED"]),
    );

    const [first, resume] = posts.slice(-2);
    const interruptId = (await form.locator("details.raw pre").textContent())!.match(/"id": "([^"]+)"/)![1];
    expect(resume).toMatchObject({
      threadId: first!.threadId,
      forwardedProps: first!.forwardedProps,
      resume: [{ interruptId, status: "resolved", payload: { decision: "allow_once" } }],
    });
    expect(resume!.runId).not.toBe(first!.runId);

    const png = await screenshot(page, "sandbox-permission");
    await expectDrawn(png, run(1).locator(".bar.kind-message"));
  }, 60_000);

  it("cancels a question with the cancel button: the resume says status cancelled", async () => {
    await start("question");
    await finished(run(2));
    const form = run(2).locator("form.interrupts");
    expect(await form.getByLabel("Shanghai").count()).toBe(1);
    expect(await form.getByLabel("Free text", { exact: true }).count()).toBe(1);
    // Sending nothing is refused on the page, before any request.
    await form.getByRole("button", { name: "Send answer" }).click();
    expect(await form.locator(".form-error").textContent()).toBe("Choose one of the answers.");
    await form.getByRole("button", { name: "Cancel" }).click();
    await finished(run(3));
    expect(posts.at(-1)!.resume).toEqual([{ interruptId: expect.any(String), status: "cancelled" }]);
  }, 60_000);

  it("puts event text on the page as text, never as markup", async () => {
    const html = await page.evaluate(async () => {
      const { h } = await import("/sandbox/dom.js" as string);
      return (h("p", {}, '<img src="x" onerror="alert(1)">') as { innerHTML: string }).innerHTML;
    });
    expect(html).toBe('&lt;img src="x" onerror="alert(1)"&gt;');
  });

  it("logged no script errors or CSP refusals", () => {
    expect(problems).toEqual([]);
  });
});
