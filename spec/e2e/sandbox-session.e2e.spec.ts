/**
 * The sandbox's first ten minutes, driven as a person would in headless
 * Chromium: finding the page from the start log line, reading every status
 * message on screen, runs that stay apart (the pipeline tick, New thread,
 * the inspector and the state panel), runs that survive a reload without
 * the token, the service's threads listed and attached to, and a run's
 * request copied as cURL and fetch. The service runs its embedded demo
 * kernel and wants a bearer token, which the page must never store.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, it } from "@jest/globals";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { startService, type RunningService } from "../../lib/server.js";
import { expectValidRun } from "../support/agui.js";
import { MAIN, startServiceProcess } from "../support/service-process.js";
import { testConfig } from "../support/service.js";
import { collectProblems, launchChromium, screenshot, STREAM_TIMEOUT, VIEWPORT } from "./browser.js";
import { describeInBrowser, sseEvents } from "./sandbox-run-browser.js";

const TOKEN = "s3cret-token-for-the-sandbox";
const run = promisify(execFile);

/** What the page's status line showed each time it changed, measured there and then (installed before the page's scripts run). */
interface StatusSighting {
  text: string;
  box: { x: number; y: number; width: number; height: number };
  viewport: { width: number; height: number };
  clipped: boolean;
  covered: boolean;
}

// Runs in the page, where the DOM exists; the specs are typechecked without the DOM lib.
interface PageElement {
  textContent: string;
  scrollWidth: number;
  clientWidth: number;
  scrollHeight: number;
  clientHeight: number;
  getBoundingClientRect(): { x: number; y: number; width: number; height: number };
  contains(other: unknown): boolean;
}
declare const document: {
  readyState: string;
  cookie: string;
  addEventListener(type: string, listener: () => void): void;
  querySelector(selector: string): PageElement;
  elementFromPoint(x: number, y: number): unknown;
};
declare const window: { innerWidth: number; innerHeight: number; reportStatus(sighting: StatusSighting): Promise<void> };
declare const MutationObserver: new (callback: () => void) => { observe(target: unknown, options: object): void };
declare const sessionStorage: Record<string, string>;
declare const localStorage: Record<string, string>;
declare const indexedDB: { databases(): Promise<unknown[]> };
declare const navigator: { clipboard: { readText(): Promise<string> } };

/** The RunAgentInput (or observer body) the page POSTed, as far as the spec reads it. */
interface Posted {
  threadId: string;
  runId: string;
  messages: Array<{ content: string }>;
  forwardedProps: { iacCode: Record<string, unknown> };
}

function watchStatusLine(): void {
  const measure = (status: PageElement) => {
    const rect = status.getBoundingClientRect();
    const top = document.elementFromPoint(rect.x + rect.width / 2, rect.y + rect.height / 2);
    void window.reportStatus({
      text: status.textContent,
      box: { x: rect.x, y: rect.y, width: rect.width, height: rect.height },
      viewport: { width: window.innerWidth, height: window.innerHeight },
      clipped: status.scrollWidth > status.clientWidth || status.scrollHeight > status.clientHeight,
      covered: !(top === status || status.contains(top)),
    });
  };
  // Parsed but the page's module scripts not yet run (they run before DOMContentLoaded): what they say at once is seen too.
  document.addEventListener("readystatechange", () => {
    if (document.readyState !== "interactive") return;
    const status = document.querySelector("#status");
    new MutationObserver(() => measure(status)).observe(status, { childList: true, characterData: true, subtree: true });
  });
}

describeInBrowser("the sandbox's session, in Chromium", () => {
  let service: RunningService;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const problems: string[] = [];
  const sightings: StatusSighting[] = [];
  const posts: Array<{ path: string; body: Posted }> = [];
  const streams: Array<{ path: string; body: Promise<string> }> = [];
  const dir = mkdtempSync(path.join(os.tmpdir(), "sandbox-session-"));

  beforeAll(async () => {
    service = await startService(testConfig({ a2aUrl: undefined, authToken: TOKEN }));
    browser = await launchChromium();
    context = await browser.newContext({ viewport: VIEWPORT });
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: service.url });
    // Reported to the spec as they happen, so the sightings outlive the page's reloads.
    await context.exposeFunction("reportStatus", (sighting: StatusSighting) => void sightings.push(sighting));
    await context.addInitScript(watchStatusLine);
    page = await context.newPage();
    collectProblems(page, problems);
    page.on("request", (request) => {
      if (request.method() === "POST")
        posts.push({ path: new URL(request.url()).pathname, body: JSON.parse(request.postData() ?? "null") as Posted });
    });
    page.on("response", (response) => {
      if ((response.headers()["content-type"] ?? "").startsWith("text/event-stream"))
        streams.push({ path: new URL(response.url()).pathname, body: response.text() });
    });
    await page.goto(`${service.url}/sandbox`);
    await page.locator("#service", { hasText: "needs a bearer token" }).waitFor();
    await page.fill("#token", TOKEN);
    await page.press("#token", "Tab");
    await page.locator("#run:enabled").waitFor();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await service?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const runs = () => page.locator("section.run");
  const lastRun = () => runs().last();
  const ended = (section = lastRun()) =>
    section
      .locator(".pill")
      .filter({ hasText: /^(finished|waiting for an answer|run error|refused)$/ })
      .waitFor({ timeout: STREAM_TIMEOUT });
  const status = () => page.locator("#status");

  it("names the sandbox in the service's start log line, where a person opens it", async () => {
    if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run \`npm run build\` first`);
    const started = await startServiceProcess({ IAC_CODE_AGUI_STATE_DIR: dir });
    try {
      const record = started.records().find((line) => /listening on/.test(line.msg))!;
      expect(record.sandboxUrl).toBe(`${started.url}/sandbox`);
      expect(record.msg).toContain(`the sandbox at ${started.url}/sandbox`);
      const other = await context.newPage();
      await other.goto(String(record.sandboxUrl));
      await other.locator("#service", { hasText: "iac-code-agui" }).waitFor();
      await expect(other.title()).resolves.toBe("iac-code-agui · stream sandbox");
      await other.close();
    } finally {
      started.child.kill("SIGTERM");
      await started.exited;
    }
    const off = await startServiceProcess({ IAC_CODE_AGUI_STATE_DIR: dir, IAC_CODE_AGUI_SANDBOX: "off" });
    try {
      const record = off.records().find((line) => /listening on/.test(line.msg))!;
      expect(record).not.toHaveProperty("sandboxUrl");
      expect(record.msg).not.toContain("sandbox");
    } finally {
      off.child.kill("SIGTERM");
      await off.exited;
    }
  }, 60_000);

  it("does not run a free-text message as a pipeline after a pipeline fixture ticked the box", async () => {
    await page.selectOption("#fixture", "pipeline");
    await expect(page.isChecked("#pipeline")).resolves.toBe(true);
    await page.click("#run");
    await ended();
    expect(posts.at(-1)!.body.forwardedProps.iacCode.runMode).toBe("pipeline");
    await expect(page.isChecked("#pipeline")).resolves.toBe(false);

    await page.fill("#message", "hello after a pipeline");
    await page.press("#message", "Enter");
    await ended();
    expect(posts.at(-1)!.body.messages[0]!.content).toBe("hello after a pipeline");
    expect(posts.at(-1)!.body.forwardedProps.iacCode).not.toHaveProperty("runMode");
    await expect(lastRun().locator(".run-title").textContent()).resolves.toBe("“hello after a pipeline”");

    // Ticked by the person, the box does make the message a pipeline, and Run takes a fixture's own mode again.
    await page.check("#pipeline");
    await page.fill("#message", "pipeline on purpose");
    await page.press("#message", "Enter");
    await ended();
    expect(posts.at(-1)!.body.forwardedProps.iacCode.runMode).toBe("pipeline");
    await page.click("#run");
    await ended();
    expect(posts.at(-1)!.body.forwardedProps.iacCode.runMode).toBe("pipeline");
    for (const stream of streams.filter((received) => received.path === "/")) await expectValidRun(sseEvents(await stream.body) as never);
  }, 120_000);

  it("keeps the runs on the page at New thread, and the inspector and state panel follow the run clicked in", async () => {
    const before = await runs().count();
    const oldThread = await page.textContent("#thread-id");
    await page.click("#new-thread");
    await expect(page.textContent("#thread-id")).resolves.not.toBe(oldThread);
    await expect(runs().count()).resolves.toBe(before);
    await expect(status().textContent()).resolves.toMatch(/^New thread sandbox-thread-\w+: .*the runs above stay on the page\.$/);

    await page.fill("#message", "on the new thread");
    await page.press("#message", "Enter");
    await ended();
    expect(posts.at(-1)!.body.threadId).not.toBe(oldThread);

    // The first run (a pipeline) has a state; an event of it in the inspector.
    const pipelineRun = runs().first();
    await pipelineRun.scrollIntoViewIfNeeded();
    // Dispatched: the run's sticky chart may lie over its first rows at this viewport.
    await pipelineRun.locator(".ev-type", { hasText: "RUN_STARTED" }).first().dispatchEvent("click");
    await expect(page.textContent("#inspector-body")).resolves.toContain('"type": "RUN_STARTED"');
    await expect(page.textContent("#state-title")).resolves.toBe("Thread state · run 1");

    // Clicking in the last run (a chat) shows nothing of the first one any more.
    await lastRun().locator(".run-title").click();
    const last = await runs().count();
    await expect(page.textContent("#inspector-title")).resolves.toBe(`Nothing selected in run ${last}`);
    await expect(page.textContent("#inspector-body")).resolves.not.toContain("RUN_STARTED");
    await expect(page.textContent("#state-title")).resolves.toBe(`Thread state · run ${last}`);
  }, 60_000);

  it("copies a run's request as cURL and fetch with $TOKEN for the token, and shows the headers both ways", async () => {
    const chat = lastRun();
    const sent = posts.at(-1)!.body;
    await chat.getByRole("button", { name: "Copy as cURL" }).click();
    await status()
      .filter({ hasText: /^Copied run \d+ as cURL/ })
      .waitFor();
    const curl = await page.evaluate(() => navigator.clipboard.readText() as Promise<string>);
    expect(curl).toContain(`"authorization: Bearer $TOKEN"`);
    expect(curl).not.toContain(TOKEN);
    await expect(page.textContent("#inspector-body")).resolves.toBe(curl);

    // Pasted into a shell with the token in $TOKEN, the command reaches the service as the page's request did:
    // authorised, its body read (the same runId again is a duplicate, which only a parsed body can be).
    const { stdout } = await run("bash", ["-c", `${curl} -s -w '\\n%{http_code}'`], { env: { ...process.env, TOKEN } });
    const [body, code] = [stdout.slice(0, stdout.lastIndexOf("\n")), stdout.slice(stdout.lastIndexOf("\n") + 1)];
    expect(code).toBe("409");
    expect(JSON.parse(body)).toMatchObject({ error: { code: "DUPLICATE_RUN_ID" } });
    expect(sent.runId).toEqual(expect.any(String));

    await chat.getByRole("button", { name: "Copy as fetch" }).click();
    await status()
      .filter({ hasText: /^Copied run \d+ as fetch/ })
      .waitFor();
    const fetchText = await page.evaluate(() => navigator.clipboard.readText() as Promise<string>);
    expect(fetchText).toContain('"authorization": `Bearer ${TOKEN}`');
    expect(fetchText).not.toContain(TOKEN);
    expect(fetchText).toContain(JSON.stringify(sent.runId));

    await chat.getByRole("button", { name: "Headers" }).click();
    const headers = (await page.textContent("#inspector-body"))!;
    expect(headers).toMatch(/^POST \/\n(.+\n)*authorization: Bearer \$TOKEN\n/);
    expect(headers).toMatch(/^HTTP 200 OK$/m);
    expect(headers).toMatch(/^content-type: text\/event-stream/m);
    expect(headers).not.toContain(TOKEN);
  }, 60_000);

  it("lists the service's threads with their status, and attaches to one by its id", async () => {
    await page.click("#new-thread");
    await page.selectOption("#fixture", "permission");
    await page.click("#run");
    await ended();
    const paused = posts.at(-1)!.body.threadId as string;
    await page.click("#threads-panel summary");
    const row = page.locator(`.thread-row[data-thread="${paused}"]`);
    await row.waitFor();
    await expect(row.locator(".thread-status").textContent()).resolves.toBe("waiting for an answer");
    // Newest first: the thread just paused heads the list.
    await expect(page.locator(".thread-row").first().getAttribute("data-thread")).resolves.toBe(paused);
    await screenshot(page, "sandbox-threads", true);

    const count = await runs().count();
    await row.getByRole("button", { name: "Attach" }).click();
    await runs().nth(count).waitFor();
    await ended(runs().nth(count));
    expect(posts.at(-1)).toEqual({ path: `/extensions/iac-code/v1/threads/${paused}/connect`, body: { threadId: paused } });
    await expect(lastRun().locator(".run-title").textContent()).resolves.toBe(`attached · thread ${paused}`);
    const attached = sseEvents(await streams.at(-1)!.body);
    await expectValidRun(attached as never);
    expect(attached.at(-1)).toMatchObject({ type: "RUN_FINISHED", outcome: { type: "interrupt" } });

    // The state panel shows the attached view's state; clicking in an earlier run shows that one's, never the attached one's.
    const attachedNumber = await runs().count();
    await expect(page.textContent("#state-title")).resolves.toBe(`Thread state · run ${attachedNumber}`);
    await expect(page.textContent("#state-json")).resolves.toContain('"pendingInterrupts"');
    await runs().nth(1).locator(".run-title").click();
    await expect(page.textContent("#state-title")).resolves.toBe("Thread state · run 2");
    await expect(page.textContent("#state-json")).resolves.toBe("(no STATE_SNAPSHOT yet)");
  }, 60_000);

  it("brings the runs and the thread back after a reload, and never stores the token", async () => {
    const titles = await runs().locator(".run-title").allTextContents();
    const metas = await runs().locator(".meta").allTextContents();
    const thread = await page.textContent("#thread-id");
    const stored = await page.evaluate(async () => ({
      session: JSON.stringify(Object.entries(sessionStorage)),
      local: JSON.stringify(Object.entries(localStorage)),
      cookies: document.cookie as string,
      databases: ((await indexedDB.databases()) as unknown[]).length,
    }));
    expect(stored.session).toContain(thread);
    for (const place of [stored.session, stored.local, stored.cookies]) expect(place).not.toContain(TOKEN);
    expect(stored.databases).toBe(0);

    await page.reload();
    await page.locator("#service", { hasText: "needs a bearer token" }).waitFor();
    await expect(page.inputValue("#token")).resolves.toBe("");
    await expect(page.textContent("#thread-id")).resolves.toBe(thread);
    await expect(runs().locator(".run-title").allTextContents()).resolves.toEqual(titles);
    await expect(runs().locator(".meta").allTextContents()).resolves.toEqual(metas);
    expect(sightings.map((sighting) => sighting.text)).toContain(
      `${titles.length} runs from before the reload; the page's thread is still ${thread}.`,
    );
    // A restored run is a run like any other: its events open in the inspector.
    await runs().first().scrollIntoViewIfNeeded();
    await runs().first().locator(".ev-type", { hasText: "RUN_STARTED" }).first().dispatchEvent("click");
    await expect(page.textContent("#inspector-body")).resolves.toContain('"type": "RUN_STARTED"');

    await page.fill("#token", TOKEN);
    await page.press("#token", "Tab");
    await page.locator("#run:enabled").waitFor();
    await page.click("#clear-runs");
    await expect(runs().count()).resolves.toBe(0);
    await page.reload();
    await page.locator("#service", { hasText: "needs a bearer token" }).waitFor();
    await expect(runs().count()).resolves.toBe(0);
    await page.fill("#token", TOKEN);
    await page.press("#token", "Tab");
    await page.locator("#run:enabled").waitFor();
  }, 60_000);

  it("offers a pause's answer form again after a reload, and the answer resumes the run", async () => {
    await page.click("#new-thread");
    await page.click("#clear-runs");
    await page.selectOption("#fixture", "permission");
    await page.click("#run");
    await ended();
    await runs().first().locator("form.interrupts").waitFor();

    await page.reload();
    await page.locator("#service", { hasText: "needs a bearer token" }).waitFor();
    await page.fill("#token", TOKEN);
    await page.press("#token", "Tab");
    await page.locator("#run:enabled").waitFor();
    const form = runs().first().locator("form.interrupts");
    await form.waitFor();
    await form.getByLabel("Allow once").check();
    await form.getByRole("button", { name: "Send answer" }).click();
    await ended(runs().nth(1));
    await expect(runs().nth(1).locator(".pill").textContent()).resolves.toBe("finished");
    await expect(runs().first().locator(".pill").textContent()).resolves.toBe("answered");
    const [paused, resume] = posts.slice(-2).map((post) => post.body);
    expect(resume).toMatchObject({ threadId: paused!.threadId, forwardedProps: paused!.forwardedProps, resume: [{ status: "resolved" }] });
    await page.click("#clear-runs");
  }, 60_000);

  it("keeps the newest runs within the cap across a reload, and none larger than the whole of it", async () => {
    // A tab of its own: its sessionStorage is not the main page's.
    const other = await context.newPage();
    await other.goto(`${service.url}/sandbox`);
    const result = await other.evaluate(async () => {
      const store = (await import("/sandbox/session-store.js" as string)) as {
        MAX_KEPT_RUNS: number;
        MAX_KEPT_CHARS: number;
        saveSession(thread: unknown, runs: unknown[]): number;
        loadSession(): { runs: Array<{ title: string }> };
      };
      const thread = { id: "t", rosInvocationId: "r", forwardedProps: undefined };
      const small = (title: string, bytes = 10) => ({ title, events: [[0, { type: "RAW", text: "x".repeat(bytes) }]] });
      const many = Array.from({ length: store.MAX_KEPT_RUNS + 5 }, (_, i) => small(`run ${i}`));
      const keptOfMany = store.saveSession(thread, many);
      const titlesOfMany = store.loadSession().runs.map((run) => run.title);
      const half = Math.floor(store.MAX_KEPT_CHARS / 2);
      const keptOfLarge = store.saveSession(thread, [small("a", half), small("b", half), small("c", 10)]);
      const titlesOfLarge = store.loadSession().runs.map((run) => run.title);
      const keptOfHuge = store.saveSession(thread, [small("huge", store.MAX_KEPT_CHARS)]);
      return { max: store.MAX_KEPT_RUNS, keptOfMany, titlesOfMany, keptOfLarge, titlesOfLarge, keptOfHuge };
    });
    await other.close();
    expect(result.keptOfMany).toBe(result.max);
    expect(result.titlesOfMany).toEqual(Array.from({ length: result.max }, (_, i) => `run ${i + 5}`));
    // Two half-budget runs and a small one do not all fit: the oldest goes first.
    expect([result.keptOfLarge, result.titlesOfLarge]).toEqual([2, ["b", "c"]]);
    expect(result.keptOfHuge).toBe(0);
  }, 60_000);

  it("quotes a copied cURL command so a body with quotes reaches the shell unchanged", async () => {
    const body = JSON.stringify({ text: `it's "quoted" $HOME \\ \`cmd\`` });
    const command = await page.evaluate(async (text) => {
      const { asCurl, sentRequest } = (await import("/sandbox/run-request.js" as string)) as {
        asCurl(request: unknown): string;
        sentRequest(url: string, headers: Record<string, string>, body: string): unknown;
      };
      return asCurl(sentRequest("http://127.0.0.1:1/", { authorization: "Bearer secret" }, text));
    }, body);
    expect(command).not.toContain("secret");
    // The shell runs the command with a curl that prints its last argument: the body as curl would get it.
    const { stdout } = await run("bash", ["-c", `curl() { printf '%s' "\${@: -1}"; }\n${command}`]);
    expect(stdout).toBe(body);
  });

  it("shows a refusal and a file it cannot open in the status line", async () => {
    const junk = path.join(dir, "notes.txt");
    writeFileSync(junk, "just some notes\n");
    await page.setInputFiles("#open-file", junk);
    await status()
      .filter({ hasText: /^notes\.txt: this is neither a saved run/ })
      .waitFor();
    await expect(status().getAttribute("data-tone")).resolves.toBe("error");

    await page.click("#attach-panel summary");
    await page.fill("#attach-execution", "");
    await page.click("#attach");
    await status()
      .filter({ hasText: /^Attach needs a threadId and an executionId/ })
      .waitFor();

    await page.click(".settings summary");
    await page.fill("#cwd", "/proc/not-an-allowed-root");
    await page.fill("#message", "refused, the cwd is outside the allowed roots");
    await page.press("#message", "Enter");
    await ended();
    expect(await status().textContent()).toMatch(/^Run \d+ .*: refused\. HTTP 400: INVALID_INPUT: /);
    await page.fill("#cwd", os.tmpdir());
  }, 60_000);

  it("showed every status message on screen: inside the viewport, not clipped, not covered", async () => {
    const seen = sightings;
    const texts = seen.map((sighting) => sighting.text);
    // The kinds of message a person meets first, each seen at least once.
    for (const kind of [
      /^This service wants a bearer token/,
      /fixtures\. Pick one and press Run/,
      /is streaming…$/,
      /: waiting for an answer\.$/,
      /: success\.$/,
      /^New thread /,
      /^Copied run \d+ as cURL/,
      /threads? on the service/,
      /runs from before the reload/,
      /^Cleared the page's runs/,
      /^notes\.txt: this is neither/,
      /: refused\. HTTP 400/,
    ])
      expect({ kind: String(kind), seen: texts.some((text) => kind.test(text)) }).toEqual({ kind: String(kind), seen: true });
    for (const sighting of seen.filter((entry) => entry.text !== "")) {
      const { box, viewport } = sighting;
      expect({ text: sighting.text, visible: box.width > 0 && box.height > 0 }).toEqual({ text: sighting.text, visible: true });
      expect({
        text: sighting.text,
        inside: box.x >= 0 && box.y >= 0 && box.x + box.width <= viewport.width && box.y + box.height <= viewport.height,
      }).toEqual({ text: sighting.text, inside: true });
      expect({ text: sighting.text, clipped: sighting.clipped, covered: sighting.covered }).toEqual({
        text: sighting.text,
        clipped: false,
        covered: false,
      });
    }
  });

  it("logged no script errors or CSP refusals", () => {
    // The 401s of the token-less loads after a reload and the 400 the refusal case asked for are answers, not the page's errors.
    expect(problems.filter((problem) => !/status of (400|401) /.test(problem))).toEqual([]);
  });
});
