/**
 * What the sandbox-run e2e specs share: Debian's Chromium through
 * playwright-core, screenshots checked for being real pictures (and kept
 * for people: spec/e2e/__screenshots__/, and docs/images/ for the ones
 * docs/sandbox.md shows), and every AG-UI stream the page receives kept
 * whole, so the spec can hold each to the same checks as any other test
 * stream (`expectValidRun`).
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { expect } from "@jest/globals";
import { chromium, type Browser, type Locator, type Page } from "playwright-core";
import { PROJECT_ROOT } from "../../lib/paths.js";
import { readPng, type Png } from "./png.js";

// Runs in the page (inside evaluate), where the DOM exists; the specs are typechecked without the DOM lib.
declare const getComputedStyle: (element: unknown) => { backgroundColor: string };

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
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
const SCREENSHOTS = path.join(PROJECT_ROOT, "spec", "e2e", "__screenshots__");
const DOC_IMAGES = path.join(PROJECT_ROOT, "docs", "images");

const inCi = ["true", "1"].includes((process.env.CI ?? "").toLowerCase());
export const haveChromium = existsSync(CHROMIUM);
export const browserTestsRun = haveChromium || inCi;

/** One streamed answer the page got: where it was POSTed and its SSE text, read once the stream ended. */
export interface ReceivedStream {
  path: string;
  body: Promise<string>;
}

export interface SandboxBrowser {
  browser: Browser;
  page: Page;
  /** Console errors, page errors and CSP refusals: a test ends by expecting none. */
  problems: string[];
  /** Every JSON body the page POSTed, in order, with its path. */
  posts: Array<{ path: string; body: Record<string, unknown> }>;
  streams: ReceivedStream[];
}

export async function openSandbox(url: string): Promise<SandboxBrowser> {
  if (!haveChromium) throw new Error(`No Chromium at ${CHROMIUM}: CI must install it (.ci/run runs apt-get install chromium).`);
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS });
  const page = await browser.newPage({ viewport: VIEWPORT });
  const problems: string[] = [];
  const posts: SandboxBrowser["posts"] = [];
  const streams: ReceivedStream[] = [];
  page.on("console", (message) => message.type() === "error" && problems.push(message.text()));
  page.on("pageerror", (error) => problems.push(error.message));
  page.on("request", (request) => {
    if (request.method() === "POST") posts.push({ path: new URL(request.url()).pathname, body: JSON.parse(request.postData() ?? "null") });
  });
  page.on("response", (response) => {
    if ((response.headers()["content-type"] ?? "").startsWith("text/event-stream"))
      streams.push({ path: new URL(response.url()).pathname, body: response.text() });
  });
  mkdirSync(SCREENSHOTS, { recursive: true });
  mkdirSync(DOC_IMAGES, { recursive: true });
  await page.goto(`${url}/sandbox`);
  await page.locator("#service").filter({ hasText: "iac-code-agui" }).waitFor();
  return { browser, page, problems, posts, streams };
}

/** The events of an SSE body, in order. */
export function sseEvents(text: string): unknown[] {
  return text
    .split(/\n\n/)
    .map((record) =>
      record
        .split("\n")
        .filter((line) => line.startsWith("data:"))
        .map((line) => line.slice(5).replace(/^ /, ""))
        .join("\n"),
    )
    .filter((data) => data !== "")
    .map((data) => JSON.parse(data) as unknown);
}

/**
 * Saves the viewport (and, with `forDocs`, a copy under docs/images/) and returns it decoded, after checking it is a
 * real picture of the page: the viewport's size, many colours, no one colour nearly everywhere.
 */
export async function screenshot(page: Page, name: string, forDocs = false): Promise<Png> {
  await page.mouse.move(0, 0); // no hover effect on what is checked
  const data = await page.screenshot();
  writeFileSync(path.join(SCREENSHOTS, `${name}.png`), data);
  if (forDocs) writeFileSync(path.join(DOC_IMAGES, `${name}.png`), data);
  const png = readPng(data);
  expect([png.width, png.height]).toEqual([VIEWPORT.width, VIEWPORT.height]);
  const { distinct, commonestShare } = png.colourStats();
  expect(distinct).toBeGreaterThan(100);
  expect(commonestShare).toBeLessThan(0.9);
  return png;
}

/** The screenshot's pixel at `(x, y)` is within `tolerance` of the CSS colour `rgb`. */
export function expectPixel(png: Png, x: number, y: number, rgb: readonly number[], tolerance = 12): void {
  const actual = png.pixel(Math.round(x), Math.round(y));
  expect({ at: [Math.round(x), Math.round(y)], near: actual.every((channel, i) => Math.abs(channel - rgb[i]!) <= tolerance) }).toEqual({
    at: [Math.round(x), Math.round(y)],
    near: true,
  });
}

/** The screenshot's pixels at the middle of an element are the colour its CSS gives it: the element is drawn, and not covered. */
export async function expectDrawn(png: Png, element: Locator): Promise<void> {
  const box = (await element.boundingBox())!;
  expect(box.width).toBeGreaterThan(2);
  const css = await element.evaluate((el) => getComputedStyle(el).backgroundColor);
  expectPixel(png, box.x + box.width / 2, box.y + box.height / 2, css.match(/\d+/g)!.slice(0, 3).map(Number));
}
