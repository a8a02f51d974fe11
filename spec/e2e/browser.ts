/**
 * The sandbox page in Debian's headless Chromium, for the e2e specs of Keep
 * and the pipeline view: the real service with its embedded demo kernel,
 * the page loaded, screenshots checked for what they must show and saved
 * outside the checkout (`SCREENSHOTS`), so a test run leaves the tree as it
 * found it. The pictures docs/sandbox.md shows are refreshed on purpose:
 * `npm run docs:images` runs these specs with IAC_CODE_AGUI_DOC_IMAGES_DIR
 * set to docs/images/. Same rules as sandbox.e2e.spec.ts: a missing
 * Chromium skips the suite on a developer machine and fails in CI.
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect } from "@jest/globals";
import { chromium, type Browser, type Locator, type Page } from "playwright-core";
import { PROJECT_ROOT } from "../../lib/paths.js";
import { startService, type RunningService } from "../../lib/server.js";
import type { Config } from "../../lib/config.js";
import { SYSTEM_TMPDIR, testConfig } from "../support/service.js";
import { readPng, type Png } from "./png.js";

// Runs in the page (inside evaluate), where the DOM exists; the specs are typechecked without the DOM lib.
declare const getComputedStyle: (element: unknown) => { backgroundColor: string; getPropertyValue(name: string): string };

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
// Headless, and nothing that calls home. Playwright gives every launch a fresh
// temporary profile (it refuses --user-data-dir in args).
const CHROMIUM_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
export const VIEWPORT = { width: 1280, height: 800 };
/**
 * Every screenshot, to look at after a run: the system's temporary directory unless IAC_CODE_AGUI_SCREENSHOT_DIR
 * names another. Not the spec file's own (`os.tmpdir()` while it runs), which goes when the file ends.
 */
export const SCREENSHOTS = path.resolve(
  PROJECT_ROOT,
  process.env.IAC_CODE_AGUI_SCREENSHOT_DIR || path.join(SYSTEM_TMPDIR, "iac-code-agui-screenshots"),
);
/** Where the docs' pictures are written again, only when asked (`npm run docs:images`): a test run must not change tracked files. */
const DOC_IMAGES = process.env.IAC_CODE_AGUI_DOC_IMAGES_DIR
  ? path.resolve(PROJECT_ROOT, process.env.IAC_CODE_AGUI_DOC_IMAGES_DIR)
  : undefined;
export const STREAM_TIMEOUT = 20_000;

const inCi = ["true", "1"].includes((process.env.CI ?? "").toLowerCase());
const haveChromium = existsSync(CHROMIUM);
if (!haveChromium && !inCi) {
  console.warn(`Skipping the sandbox e2e tests: no Chromium at ${CHROMIUM}. Install Debian's chromium package, or set CHROMIUM_PATH.`);
}
export const describeInBrowser = haveChromium || inCi ? describe : describe.skip;

export interface SandboxPage {
  service: RunningService;
  browser: Browser;
  page: Page;
  /** Script errors and CSP refusals the page logged. */
  problems: string[];
  close(): Promise<void>;
}

/** Debian's Chromium, headless; a missing one is an error here (`describeInBrowser` has already skipped where that is allowed). */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`No Chromium at ${CHROMIUM}: CI must install it (.ci/run runs apt-get install chromium).`);
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS });
}

/** Collects the page's console errors and script errors into `problems`: a CSP refusal shows up there, not as a failed assertion. */
export function collectProblems(page: Page, problems: string[]): void {
  page.on("console", (message) => message.type() === "error" && problems.push(message.text()));
  page.on("pageerror", (error) => problems.push(error.message));
}

export async function openSandbox(config: Partial<Config> = {}): Promise<SandboxPage> {
  if (!existsSync(CHROMIUM)) throw new Error(`No Chromium at ${CHROMIUM}: CI must install it (.ci/run runs apt-get install chromium).`);
  const service = await startService(testConfig({ a2aUrl: undefined, ...config }));
  const browser = await launchChromium();
  const page = await browser.newPage({ viewport: VIEWPORT, acceptDownloads: true });
  const problems: string[] = [];
  collectProblems(page, problems);
  await page.goto(`${service.url}/sandbox`);
  await page.locator("#run:enabled").waitFor();
  return {
    service,
    browser,
    page,
    problems,
    async close() {
      await browser.close();
      await service.close();
    },
  };
}

export const runSection = (page: Page, n: number) => page.locator("section.run").nth(n);

export const finished = (section: Locator) =>
  section
    .locator(".ev-type")
    .filter({ hasText: /^RUN_(FINISHED|ERROR)$/ })
    .first()
    .waitFor({ timeout: STREAM_TIMEOUT });

export async function runFixture(page: Page, fixture: string) {
  await page.selectOption("#fixture", fixture);
  await page.click("#run");
}

/**
 * Saves the viewport for people (`forDocs`: one docs/sandbox.md shows, also
 * written to the docs' folder when `npm run docs:images` asks) and returns
 * it decoded, after checking it is a real picture of the page.
 */
export async function screenshot(page: Page, name: string, forDocs = false): Promise<Png> {
  await page.mouse.move(0, 0);
  const data = await page.screenshot();
  saveTo(SCREENSHOTS, name, data);
  if (forDocs && DOC_IMAGES) saveTo(DOC_IMAGES, name, data);
  const png = readPng(data);
  expect([png.width, png.height]).toEqual([VIEWPORT.width, VIEWPORT.height]);
  const { distinct, commonestShare } = png.colourStats();
  expect(distinct).toBeGreaterThan(100);
  expect(commonestShare).toBeLessThan(0.9);
  return png;
}

function saveTo(dir: string, name: string, data: Buffer): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, `${name}.png`), data);
}

/** The CSS background colour of an element, as RGB. */
export async function cssColour(element: Locator): Promise<number[]> {
  const css = await element.evaluate((el) => getComputedStyle(el).backgroundColor);
  return css.match(/\d+/g)!.slice(0, 3).map(Number);
}

/** The screenshot's pixel at the middle of an element is `rgb`: the element is drawn in that colour, and not covered. */
export async function expectPixel(png: Png, element: Locator, rgb: readonly number[]) {
  const box = (await element.boundingBox())!;
  expect(box.width).toBeGreaterThan(2);
  const actual = png.pixel(Math.round(box.x + box.width / 2), Math.round(box.y + box.height / 2));
  actual.forEach((channel, i) => expect(Math.abs(channel - rgb[i]!)).toBeLessThanOrEqual(12));
}

export async function depthOf(element: Locator): Promise<string> {
  return (await element.evaluate((el) => getComputedStyle(el).getPropertyValue("--depth"))).trim();
}
