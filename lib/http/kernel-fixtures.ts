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

export function kernelFixtures({ url, token, maxResponseBytes, timeoutMs }: KernelFixturesOptions): KernelFixtures {
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
        maxResponseBytes,
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
