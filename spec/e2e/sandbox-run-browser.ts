/**
 * What the sandbox-run e2e specs add to `browser.ts` (which starts its own
 * service with the demo kernel): the page opened in front of any service,
 * with every JSON body it POSTs and every AG-UI stream it receives kept
 * whole (by a recording proxy between the page and the service), so the
 * spec can hold each stream to the same checks as any other test stream
 * (`expectValidRun`); and pixel checks at a point.
 */
import { mkdirSync } from "node:fs";
import { expect } from "@jest/globals";
import type { Browser, Locator, Page } from "playwright-core";
import { collectProblems, cssColour, describeInBrowser, launchChromium, screenshot, SCREENSHOTS, VIEWPORT } from "./browser.js";
import type { Png } from "./png.js";
import { startRecordingProxy, type ReceivedStream } from "./recording-proxy.js";

export { describeInBrowser, screenshot };

export interface SandboxBrowser {
  browser: Browser;
  page: Page;
  /** Console errors, page errors and CSP refusals: a test ends by expecting none. */
  problems: string[];
  /** Every JSON body the page POSTed, in order, with its path. */
  posts: Array<{ path: string; body: Record<string, unknown> }>;
  streams: ReceivedStream[];
  /** Closes the browser, then the proxy in front of the service (the service is the caller's). */
  close(): Promise<void>;
}

export async function openSandboxAt(url: string): Promise<SandboxBrowser> {
  const proxy = await startRecordingProxy(url);
  const browser = await launchChromium();
  const page = await browser.newPage({ viewport: VIEWPORT });
  const problems: string[] = [];
  const posts: SandboxBrowser["posts"] = [];
  collectProblems(page, problems);
  // Said in the spec's own words if it happens, rather than as whichever page call comes next.
  page.on("crash", () => problems.push("the page crashed"));
  const wentAway = () => problems.push("the browser went away");
  browser.on("disconnected", wentAway);
  page.on("request", (request) => {
    if (request.method() === "POST") posts.push({ path: new URL(request.url()).pathname, body: JSON.parse(request.postData() ?? "null") });
  });
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.goto(`${proxy.url}/sandbox`);
  await page.locator("#service").filter({ hasText: "iac-code-agui" }).waitFor();
  const close = async () => {
    browser.off("disconnected", wentAway);
    await browser.close();
    await proxy.close();
  };
  return { browser, page, problems, posts, streams: proxy.streams, close };
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
  expectPixel(png, box.x + box.width / 2, box.y + box.height / 2, await cssColour(element));
}
