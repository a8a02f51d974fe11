/**
 * The sandbox as a stream debugger, driven as a person would in headless
 * Chromium: run anything (the kernel's fixture list, free text, a raw
 * RunAgentInput checked before it goes), attach to a running execution
 * and read its state, read a run on its time axis, and find events (the
 * 5,000-event run is in sandbox-run-other-kernel, in front of a kernel that
 * can send that many quickly). The service fronts a real replay kernel on loopback;
 * every stream the page receives is held to the usual AG-UI checks.
 */
import { afterAll, beforeAll, expect, it } from "@jest/globals";
import type { Locator, Page } from "playwright-core";
import { expectValidRun } from "../support/agui.js";
import { startHarness, type Harness } from "../support/service.js";
import {
  describeInBrowser,
  expectDrawn,
  expectPixel,
  openSandboxAt,
  screenshot,
  sseEvents,
  type SandboxBrowser,
} from "./sandbox-run-browser.js";

const STREAM_TIMEOUT = 30_000;
const HELD = "slow-chat";

describeInBrowser("the sandbox as a stream debugger, in Chromium", () => {
  let harness: Harness;
  let sandbox: SandboxBrowser;
  let page: Page;
  // The slow-chat turn holds its last line until the attach test lets it go, so "running" is not a bet on timing.
  let releaseHeld: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (releaseHeld = resolve));

  beforeAll(async () => {
    harness = await startHarness({
      timeScale: 1,
      holdLine: (turn, line, lines) => (turn.text === HELD && line === lines - 1 ? held : undefined),
    });
    sandbox = await openSandboxAt(harness.service.url);
    page = sandbox.page;
    await page.locator("#run:enabled").waitFor();
  }, 60_000);

  afterAll(async () => {
    releaseHeld();
    await sandbox?.close();
    await harness?.close();
  });

  const runs = () => page.locator("section.run");
  const finished = (section: Locator, timeout = STREAM_TIMEOUT) =>
    section
      .locator(".pill")
      .filter({ hasText: /^(finished|waiting for an answer|run error)$/ })
      .waitFor({ timeout });
  const lastRun = () => runs().last();

  it("lists the kernel's fixtures with whole descriptions, and sends free text typed into the message box", async () => {
    await page.selectOption("#fixture", "permission");
    // Four comment lines in the file, one description: the last words of the last line are there, in the tooltip of
    // the one line the page shows.
    expect(await page.getAttribute("#fixture-description", "title")).toMatch(
      /^A permission interrupt\. .* plays the section whose "when" is in the answer\.$/,
    );
    expect(await page.textContent("#fixture-description")).toBe("A permission interrupt.");

    await page.fill("#message", "hello from a person");
    await page.press("#message", "Enter");
    await finished(lastRun());
    expect(await lastRun().locator(".pill").textContent()).toBe("finished");
    const sent = sandbox.posts.at(-1)!;
    expect(sent.path).toBe("/");
    expect(sent.body.messages).toEqual([{ id: expect.any(String), role: "user", content: "hello from a person" }]);
    expect(await lastRun().locator(".run-title").textContent()).toBe("“hello from a person”");
  }, 60_000);

  it("checks a raw RunAgentInput before sending it, lists what is wrong, and sends it once it is right", async () => {
    await page.click("#raw-editor summary");
    const before = sandbox.posts.length;
    await page.fill("#raw-input", '{"threadId": "t1", "runId": 5,');
    await page.click("#raw-send");
    expect(await page.locator("#raw-errors li").allTextContents()).toEqual([expect.stringMatching(/^Not JSON: /)]);
    await page.fill("#raw-input", '{"threadId": "t1", "runId": 5, "state": {}, "messages": [{"role": "robot"}], "tools": []}');
    await page.click("#raw-send");
    expect(await page.locator("#raw-errors li").allTextContents()).toEqual([
      "runId must be a non-empty string.",
      "context must be an array.",
      "messages[0].id must be a non-empty string.",
      expect.stringMatching(/^messages\[0\]\.role must be one of user, assistant/),
    ]);
    expect(sandbox.posts.length).toBe(before);

    await page.selectOption("#fixture", "reasoning-tools");
    await page.click("#raw-fill");
    const filled = JSON.parse(await page.inputValue("#raw-input")) as {
      threadId: string;
      messages: Array<{ content: string }>;
      context: unknown[];
    };
    expect(filled.messages[0]!.content).toBe("reasoning-tools");
    // Edited by hand: a context entry the form has no field for.
    filled.context = [{ description: "typed in the editor", value: "yes" }];
    await page.fill("#raw-input", JSON.stringify(filled, null, 2));
    await page.click("#raw-send");
    expect(await page.locator("#raw-errors li").count()).toBe(0);
    await finished(lastRun());
    expect(sandbox.posts.at(-1)!.body).toEqual(filled);
    expect(await page.textContent("#thread-id")).toBe(filled.threadId);
    await page.click("#raw-editor summary");
  }, 60_000);

  it("draws the run on a time axis by the events' timestamps, with the time to the first event, the gaps and each span's duration", async () => {
    const run = lastRun();
    const events = sseEvents(await sandbox.streams.at(-1)!.body) as Array<{ type: string; timestamp: number; toolCallName?: string }>;
    const [first, last] = [events[0]!.timestamp, events.at(-1)!.timestamp];
    expect(last - first).toBeGreaterThan(200); // the fixture's recorded pace: there is time to show

    await expect(run.locator(".timing .first-event").textContent()).resolves.toMatch(/^first event after \d+ ms$/);
    await expect(run.locator(".timing .longest-gap").textContent()).resolves.toMatch(/^longest gap \d+ ms \(#\d+ → #\d+\)$/);
    const labels = await run.locator(".axis-label").allTextContents();
    expect(labels[0]).toBe("0 ms");
    expect(labels.length).toBeGreaterThanOrEqual(3);

    // The first tool call's bar starts where its TOOL_CALL_START's timestamp falls on the axis, not where its number does.
    const start = events.findIndex((event) => event.type === "TOOL_CALL_START");
    const share = (events[start]!.timestamp - first) / (last - first);
    const track = (await run.locator(".track.axis").boundingBox())!;
    const bar = (await run.locator(".bar.kind-tool").first().boundingBox())!;
    expect(Math.abs(bar.x - (track.x + share * track.width))).toBeLessThanOrEqual(3);
    const byNumber = track.x + (start / events.length) * track.width;
    expect(Math.abs(byNumber - (track.x + share * track.width))).toBeGreaterThan(6); // else this test could not tell the two apart

    const end = events.findIndex((event, i) => i > start && event.type === "TOOL_CALL_RESULT");
    expect(await run.locator(".span-label.kind-tool .took").first().textContent()).toBe(
      `${events[end]!.timestamp - events[start]!.timestamp} ms`,
    );
    // The gap column: each row's silence since the event before it.
    const gap = events[start]!.timestamp - events[start - 1]!.timestamp;
    expect(await run.locator(`.ev[data-index="${start}"] .ev-gap`).textContent()).toBe(gap ? `Δ${gap} ms` : "");

    await run.locator(".run-top").scrollIntoViewIfNeeded();
    await page
      .locator("#timeline")
      .evaluate((timeline, top) => (timeline.scrollTop = top), await run.evaluate((section) => section.offsetTop - 8));
    const png = await screenshot(page, "sandbox-time-axis", true);
    // Each tick is drawn as a dark line across the axis, below its label.
    for (const tick of await run.locator(".axis-tick").all()) {
      const box = (await tick.boundingBox())!;
      if (box.x >= track.x + track.width - 1) continue;
      expectPixel(png, box.x, track.y + track.height - 2, [0x47, 0x55, 0x69], 40);
    }
    await expectDrawn(png, run.locator(".bar.kind-tool").first());
    await expectDrawn(png, run.locator(".bar.kind-message").first());
  }, 60_000);

  it("filters the events by type and by name, and searches their JSON", async () => {
    const run = lastRun();
    const all = await run.locator(".ev").count();
    try {
      await findIn(run, all);
    } finally {
      // The later tests read their runs' rows: they must not inherit a filter from a failure here.
      if (await page.isEnabled("#find-clear")) await page.click("#find-clear");
    }
    expect(await run.locator(".ev").count()).toBe(all);
  }, 60_000);

  async function findIn(run: Locator, all: number) {
    await page.selectOption("#find-type", "TOOL_CALL_START");
    expect(await run.locator(".ev-type").allTextContents()).toEqual(["TOOL_CALL_START", "TOOL_CALL_START"]);
    await expect(run.locator(".meta").textContent()).resolves.toMatch(/ \(2 shown\) /);

    await page.selectOption("#find-type", "");
    await page.fill("#find-name", "ValidateTemplate");
    // The call's name reaches its arguments, end and result, which carry only its id.
    const named = await run.locator(".ev-type").allTextContents();
    expect(named).toEqual(expect.arrayContaining(["TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_RESULT"]));
    expect(named.length).toBeLessThan(all);

    await page.fill("#find-name", "");
    await page.fill("#find-search", "artifact");
    const found = run.locator(".ev");
    expect(await found.count()).toBeGreaterThan(0);
    expect(await found.count()).toBeLessThan(all);
    for (const row of await found.all()) {
      await row.click();
      expect((await page.textContent("#inspector-body"))!.toLowerCase()).toContain("artifact");
    }
    await screenshot(page, "sandbox-find", true);
  }

  it("attaches to a running execution and shows its state, patched by each STATE_DELTA, and its conversation", async () => {
    await page.click("#new-thread");
    await page.fill("#message", HELD);
    await page.press("#message", "Enter");
    const watched = lastRun();
    // The run's session event names the execution, and the attach form takes it from there.
    await page.waitForFunction("document.querySelector('#attach-execution').value !== ''", undefined, { timeout: STREAM_TIMEOUT });
    await page.click("#attach-panel summary");
    await page.click("#attach");

    const attached = lastRun();
    await expect(attached.locator(".run-title").textContent()).resolves.toMatch(/^attached · /);
    await page.locator("#state-json").filter({ hasText: '"runActive": true' }).waitFor({ timeout: STREAM_TIMEOUT });
    expect(await page.locator("#conversation .bubble.role-user").last().textContent()).toContain(HELD);
    expect(sandbox.posts.at(-1)!.path).toMatch(/^\/extensions\/iac-code\/v1\/executions\/[^/]+\/subscribe$/);

    releaseHeld();
    await finished(watched);
    await finished(attached);
    await page.locator("#state-json").filter({ hasText: '"runActive": false' }).waitFor({ timeout: STREAM_TIMEOUT });
    expect(Number(await page.getAttribute("#state-json", "data-deltas"))).toBeGreaterThanOrEqual(1);
    expect(await page.textContent("#state-note")).toMatch(/STATE_DELTA applied to the snapshot/);
    expect(await attached.locator(".ev-type").allTextContents()).toEqual(
      expect.arrayContaining(["STATE_SNAPSHOT", "MESSAGES_SNAPSHOT", "STATE_DELTA"]),
    );
    await screenshot(page, "sandbox-attach", true);
    await page.click("#attach-panel summary");
  }, 60_000);

  // A service without a token, and a page whose token field was never touched: the panel and the run picking must
  // work from the page's first load, not only once a token was typed.
  it("lists the service's threads and moves the state panel to the run clicked in, without a token", async () => {
    const pageThread = (await page.textContent("#thread-id"))!;
    await page.click("#threads-panel summary");
    await page.locator(`.thread-row[data-thread="${pageThread}"]`).waitFor({ timeout: STREAM_TIMEOUT });
    await page.click("#threads-panel summary");

    await runs().first().locator(".run-title").click();
    await expect(page.textContent("#state-title")).resolves.toBe("Thread state · run 1");
    await lastRun().locator(".run-title").click();
    await expect(page.textContent("#state-title")).resolves.toBe(`Thread state · run ${await runs().count()}`);
  }, 60_000);
  it("applies STATE_DELTA as RFC 6902 JSON Patch, to a copy, and refuses a patch that does not apply", async () => {
    const results = await page.evaluate(async () => {
      const { applyPatch } = (await import("/sandbox/json-patch.js" as string)) as {
        applyPatch: (document: unknown, patch: unknown[]) => unknown;
      };
      const state = { a: { b: [1, 2] }, "x/y": 1, "t~": 2 };
      const tryPatch = (patch: unknown[]) => {
        try {
          return applyPatch(state, patch);
        } catch (error) {
          return `error: ${(error as Error).message}`;
        }
      };
      return {
        patched: tryPatch([
          { op: "add", path: "/a/b/1", value: 9 },
          { op: "add", path: "/a/b/-", value: 3 },
          { op: "remove", path: "/x~1y" },
          { op: "replace", path: "/t~0", value: "two" },
          { op: "copy", from: "/a/b", path: "/c" },
          { op: "move", from: "/c/0", path: "/d" },
          { op: "test", path: "/d", value: 1 },
        ]),
        root: tryPatch([{ op: "replace", path: "", value: { fresh: true } }]),
        failedTest: tryPatch([{ op: "test", path: "/a/b/0", value: 5 }]),
        missing: tryPatch([{ op: "remove", path: "/nope" }]),
        unchanged: state,
      };
    });
    expect(results.patched).toEqual({ a: { b: [1, 9, 2, 3] }, "t~": "two", c: [9, 2, 3], d: 1 });
    expect(results.root).toEqual({ fresh: true });
    expect(results.failedTest).toBe("error: test failed at /a/b/0");
    expect(results.missing).toBe("error: /nope: no such path");
    expect(results.unchanged).toEqual({ a: { b: [1, 2] }, "x/y": 1, "t~": 2 });
  });

  it("received only streams that pass the AG-UI checks, and logged no script errors or CSP refusals", async () => {
    expect(sandbox.streams.length).toBeGreaterThanOrEqual(4);
    for (const stream of sandbox.streams) await expectValidRun(sseEvents(await stream.body));
    expect(sandbox.problems).toEqual([]);
  }, 60_000);
});
