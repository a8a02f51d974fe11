/**
 * The sandbox in front of a kernel that lists no fixtures (a bare A2A 1.0
 * server, as any kernel but the demo one): the page says so, hides the
 * fixture list, and still runs what a person types.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { startService, type RunningService } from "../../lib/server.js";
import { expectValidRun } from "../support/agui.js";
import { startBurstKernel, type BurstKernel } from "../support/burst-kernel.js";
import { testConfig } from "../support/service.js";
import { browserTestsRun, openSandbox, sseEvents, type SandboxBrowser } from "./sandbox-run-browser.js";

const describeInBrowser = browserTestsRun ? describe : describe.skip;

describeInBrowser("the sandbox in front of a kernel without a fixture list, in Chromium", () => {
  let kernel: BurstKernel;
  let service: RunningService;
  let sandbox: SandboxBrowser;

  beforeAll(async () => {
    kernel = await startBurstKernel();
    service = await startService(testConfig({ a2aUrl: kernel.url }));
    sandbox = await openSandbox(service.url);
  }, 60_000);

  afterAll(async () => {
    await sandbox?.browser.close();
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
    for (const stream of sandbox.streams) await expectValidRun(sseEvents(await stream.body));
    expect(sandbox.problems).toEqual([]);
  }, 60_000);
});
