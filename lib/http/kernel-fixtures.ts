/**
 * The sandbox's fixture list, asked of the configured kernel (`GET
 * <a2a>/iac-code/fixtures`, served by the demo kernel) through the rules
 * every kernel request keeps (`kernel-fetch.ts`: loopback only, no
 * redirect, a size limit). Any other kernel answers 404 and has no
 * fixtures: the sandbox then offers free text only.
 */
import { kernelFetch, readAnswer } from "../a2a/kernel-fetch.js";
import { parseJson, protocolError, unavailable } from "../a2a/rpc-errors.js";
import { AguiError } from "../errors.js";
import { FIXTURE_NAME } from "../fixtures/fixture-format.js";
import type { FixtureSummary } from "../fixtures/fixture-summary.js";
import { isJsonObject } from "../model/json.js";

export type { FixtureSummary } from "../fixtures/fixture-summary.js";

/** The kernel's fixtures, or undefined when it has no fixture list. */
export type KernelFixtures = () => Promise<FixtureSummary[] | undefined>;

export interface KernelFixturesOptions {
  /** The kernel's JSON-RPC URL; the list hangs below it. */
  url: string;
  token?: string | undefined;
  maxResponseBytes: number;
  timeoutMs: number;
}

/** A page load waits on this; a kernel slower than that at listing files is as good as one without the list. */
const LIST_TIMEOUT_MS = 5_000;
/**
 * The most of a fixture list taken from the kernel: the demo kernel's is a
 * few KiB, and whoever may load the page is not to make the service carry
 * megabytes per request (a larger answer is A2A_PROTOCOL_ERROR, read no further).
 */
export const MAX_FIXTURE_LIST_BYTES = 256 * 1024;
/** How long one answer of the kernel serves every page load: fixture edits still show within a moment. */
export const FIXTURE_LIST_CACHE_MS = 2_000;

export function kernelFixtures(options: KernelFixturesOptions, now: () => number = Date.now): KernelFixtures {
  return cachedBriefly(askKernel(options), now);
}

/**
 * One kernel call at a time, however many page loads ask, and its answer
 * kept for `FIXTURE_LIST_CACHE_MS`; a failure is not kept (the next load
 * asks again).
 */
function cachedBriefly(list: KernelFixtures, now: () => number): KernelFixtures {
  let kept: { answer: Promise<FixtureSummary[] | undefined>; until: number } | undefined;
  return () => {
    // Until it settles, an answer in flight is shared: `until` is set once it has come.
    if (kept !== undefined && now() < kept.until) return kept.answer;
    const answer = list();
    const asked: NonNullable<typeof kept> = { answer, until: Number.POSITIVE_INFINITY };
    kept = asked;
    answer.then(
      () => (asked.until = now() + FIXTURE_LIST_CACHE_MS),
      () => {
        if (kept === asked) kept = undefined;
      },
    );
    return answer;
  };
}

function askKernel({ url, token, maxResponseBytes, timeoutMs }: KernelFixturesOptions): KernelFixtures {
  const base = url.endsWith("/") ? url : `${url}/`;
  const listUrl = new URL("iac-code/fixtures", base).toString();
  return async () => {
    let status: number;
    let text: string;
    try {
      const response = await kernelFetch(
        listUrl,
        {
          method: "GET",
          headers: { Accept: "application/json", ...(token === undefined ? {} : { Authorization: `Bearer ${token}` }) },
          signal: AbortSignal.timeout(Math.min(timeoutMs, LIST_TIMEOUT_MS)),
        },
        Math.min(maxResponseBytes, MAX_FIXTURE_LIST_BYTES),
      );
      status = response.status;
      text = await readAnswer(response);
    } catch (error) {
      throw error instanceof AguiError ? error : unavailable(error);
    }
    if (status === 404) return undefined;
    if (status < 200 || status >= 300) throw unavailable(new Error(`the fixture list: HTTP ${status}`), status);
    return fixturesOf(parseJson(text));
  };
}

/** Only well-formed entries with names the kernel can be asked for reach the page. */
function fixturesOf(answer: unknown): FixtureSummary[] {
  const list = isJsonObject(answer) ? answer.fixtures : undefined;
  if (!Array.isArray(list)) throw protocolError(new Error("the fixture list has no fixtures array"));
  return list.flatMap((entry: unknown) =>
    isJsonObject(entry) && typeof entry.name === "string" && FIXTURE_NAME.test(entry.name)
      ? [
          {
            name: entry.name,
            description: typeof entry.description === "string" ? entry.description : "",
            pipeline: entry.pipeline === true,
          },
        ]
      : [],
  );
}
