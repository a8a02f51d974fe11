/**
 * The sandbox in front of a kernel that lists no fixtures (a bare A2A 1.0
 * server, as any kernel but the demo one): the page says so, hides the
 * fixture list, and still runs what a person types. The same kernel sends
 * thousands of events as fast as its socket takes them (the demo kernel
 * takes tens of seconds over 5,000 frames), for the virtual list's test.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, it } from "@jest/globals";
import { startService, type RunningService } from "../../lib/server.js";
import { expectValidRun } from "../support/agui.js";
import { startBurstKernel, type BurstKernel } from "../support/burst-kernel.js";
import { testConfig } from "../support/service.js";
import { describeInBrowser, openSandboxAt, screenshot, sseEvents, type SandboxBrowser } from "./sandbox-run-browser.js";

describeInBrowser("the sandbox in front of a kernel without a fixture list, in Chromium", () => {
  let kernel: BurstKernel;
  let service: RunningService;
  let sandbox: SandboxBrowser;

  beforeAll(async () => {
    kernel = await startBurstKernel();
    service = await startService(testConfig({ a2aUrl: kernel.url }));
    sandbox = await openSandboxAt(service.url);
  }, 60_000);

  afterAll(async () => {
    await sandbox?.close();
    await service?.close();
    await kernel?.close();
  });

  it("offers free text only, and runs it", async () => {
    const { page } = sandbox;
    await page.locator("#fixture-description").filter({ hasText: "This kernel lists no fixtures" }).waitFor();
    expect(await page.isVisible("#fixture")).toBe(false);
    expect(await page.isDisabled("#run")).toBe(true);

    // The burst kernel reads its script from the user text.
    await page.fill("#message", JSON.stringify({ deltas: 3, deltaBytes: 8 }));
    await page.click("#send-message");
    const run = page.locator("section.run").last();
    await run
      .locator(".pill")
      .filter({ hasText: /^finished$/ })
      .waitFor({ timeout: 20_000 });
    expect(await run.locator(".ev-type").allTextContents()).toEqual(
      expect.arrayContaining(["RUN_STARTED", "TEXT_MESSAGE_CONTENT", "RUN_FINISHED"]),
    );
  }, 60_000);

  it("keeps a 5,000-event run smooth: far fewer rows in the DOM than events, and the last one a keypress away", async () => {
    const { page } = sandbox;
    await page.click("#new-thread");
    await page.fill("#message", JSON.stringify({ deltas: 4_996, deltaBytes: 12 }));
    await page.press("#message", "Enter");
    const run = page.locator("section.run").last();
    await run
      .locator(".pill")
      .filter({ hasText: /^(finished|run error|stream cut short)$/ })
      .waitFor({ timeout: 60_000 });
    expect(await run.locator(".pill").textContent()).toBe("finished");
    const count = Number((await run.locator(".meta").textContent())!.match(/^(\d+) events/)![1]);
    expect(count).toBeGreaterThanOrEqual(5_000);
    expect(await run.locator(".ev").count()).toBeLessThan(count / 10);

    // Scrolled to the run's first rows, then walked through by wheel: rows come and go, the DOM stays small.
    const timeline = page.locator("#timeline");
    await timeline.evaluate((element, top) => (element.scrollTop = top), await run.evaluate((section) => section.offsetTop));
    await run.locator('.ev[data-index="0"]').waitFor();
    await page.mouse.move(400, 500);
    for (let i = 0; i < 10; i++) await page.mouse.wheel(0, 2_000);
    await page.waitForFunction("document.querySelector('.run:last-of-type .ev[data-index=\"0\"]') === null");
    expect(await run.locator(".ev").count()).toBeLessThan(count / 10);

    await run.locator(".ev").first().focus();
    await page.keyboard.press("End");
    await expect(page.locator(".ev:focus .ev-type").textContent()).resolves.toBe("RUN_FINISHED");
    expect(JSON.parse((await page.textContent("#inspector-body"))!)).toMatchObject({ type: "RUN_FINISHED" });
    expect(await page.locator(".ev:focus").getAttribute("data-index")).toBe(String(count - 1));
    await screenshot(page, "sandbox-5000-events", true);
  }, 120_000);

  it("received only streams that pass the AG-UI checks, and logged no script errors or CSP refusals", async () => {
    expect(sandbox.streams.length).toBe(2);
    for (const stream of sandbox.streams) await expectValidRun(sseEvents(await stream.body));
    expect(sandbox.problems).toEqual([]);
  }, 60_000);
});

describeInBrowser("the sandbox when the kernel's fixture list fails, in Chromium", () => {
  it("says so, and still takes free text", async () => {
    // A kernel that answers everything with HTTP 500: the fixture list comes back as the service's 502.
    const kernel = http.createServer((_req, res) => res.writeHead(500, { "content-type": "application/json" }).end("{}"));
    await new Promise<void>((resolve) => kernel.listen(0, "127.0.0.1", resolve));
    const service = await startService(testConfig({ a2aUrl: `http://127.0.0.1:${(kernel.address() as AddressInfo).port}/` }));
    const sandbox = await openSandboxAt(service.url);
    try {
      const { page } = sandbox;
      await page.locator("#fixture-description").filter({ hasText: "Could not list the kernel's fixtures (HTTP 502)" }).waitFor();
      expect(await page.isVisible("#fixture")).toBe(false);
      expect(await page.isEnabled("#send-message")).toBe(true);
      expect(await page.isEnabled("#raw-send")).toBe(true);
    } finally {
      await sandbox.close();
      await service.close();
      await new Promise((resolve) => kernel.close(resolve));
    }
  }, 60_000);
});
