/**
 * `GET /extensions/iac-code/v1/threads`: the service's threads, newest
 * first, with what their stored state and lease tell (paused at an
 * interrupt, idle after a finished run), behind the bearer token, bounded
 * by `limit`.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { EventType } from "@ag-ui/core";
import { expectValidRun } from "../support/agui.js";
import { interruptScript, permissionProjection } from "../support/interrupt-scripts.js";
import { postRun, runInput, startHarness, type Harness } from "../support/service.js";
import { listLimit } from "../../lib/http/thread-list-route.js";

const TOKEN = "list-token";
const auth = { authorization: `Bearer ${TOKEN}` };

describe("GET /extensions/iac-code/v1/threads", () => {
  let harness: Harness;
  const list = (query = "", headers: Record<string, string> = auth) =>
    fetch(`${harness.service.url}/extensions/iac-code/v1/threads${query}`, { headers });

  beforeAll(async () => {
    harness = await startHarness({ script: interruptScript("permission", permissionProjection) }, { authToken: TOKEN });
  });
  afterAll(async () => {
    await harness.close();
  });

  it("wants the bearer token, as every route but the probes and the sandbox's files does", async () => {
    expect((await list("", {})).status).toBe(401);
  });

  it("lists a thread paused at an interrupt as paused, newest first, with when it was saved", async () => {
    const before = Date.now();
    const first = runInput("permission");
    const paused = await postRun(harness.service.url, first, auth);
    await expectValidRun(paused.events);
    expect(paused.events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "interrupt" } });
    const second = runInput("permission");
    await expectValidRun((await postRun(harness.service.url, second, auth)).events);

    const response = await list("?limit=2");
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBe("no-store");
    const { threads } = (await response.json()) as { threads: Array<{ threadId: string; updatedAt: string; status: string }> };
    expect(threads.map(({ threadId, status }) => ({ threadId, status }))).toEqual([
      { threadId: second.threadId, status: "paused" },
      { threadId: first.threadId, status: "paused" },
    ]);
    for (const thread of threads) expect(Date.parse(thread.updatedAt)).toBeGreaterThanOrEqual(before - 1_000);
    expect(threads[0]).toMatchObject({ pendingInterrupts: 1 });
  });

  it("keeps `limit` within 1…200, and takes the default for anything that is not a whole number", () => {
    expect([listLimit(undefined), listLimit("abc"), listLimit("-3"), listLimit("0"), listLimit("7"), listLimit("100000")]).toEqual([
      50, 50, 50, 1, 7, 200,
    ]);
  });
});
