/**
 * `/health` and `/ready` through the real service: no token needed (load
 * balancers send none), any Host answered (an orchestrator probes a pod by
 * its address) while every other route keeps the Host check, nothing secret said,
 * and `/ready` 503 with the check that failed when the kernel does not
 * answer, thread state cannot be written, or a shutdown is under way.
 */
import http from "node:http";
import { mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { EventType, PROTOCOL_VERSION } from "@ag-ui/core";
import { cachedCheck } from "../../lib/http/probes.js";
import { SERVICE_VERSION } from "../../lib/version.js";
import { startReplayKernel } from "../../lib/kernel/replay-kernel.js";
import { startService } from "../../lib/server.js";
import { expectValidRun } from "../support/agui.js";
import { openRun, parseSse } from "../support/service-process.js";
import { postRun, runInput, startHarness, testConfig, type Harness } from "../support/service.js";

const TOKEN = "probe-test-token";

/** A GET with the Host the test chooses (fetch does not let it be set). */
function get(url: string, route: string, host?: string): Promise<{ status: number; json: unknown }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const request = http.get({ hostname, port, path: route, headers: host ? { host } : {}, agent: false }, (response) => {
      let text = "";
      response.on("data", (chunk: Buffer) => (text += chunk.toString()));
      response.on("end", () => resolve({ status: response.statusCode!, json: JSON.parse(text) }));
      response.on("error", reject);
    });
    request.on("error", reject);
  });
}

describe("the probes of a service that requires a token", () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness({}, { authToken: TOKEN, a2aToken: "kernel-secret" });
  });
  afterAll(() => harness.close());

  it("answers /health without the token, with protocol and version facts and nothing secret", async () => {
    const response = await fetch(`${harness.service.url}/health`);
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(JSON.parse(text)).toEqual({
      status: "ok",
      protocol: "ag-ui",
      protocolVersion: PROTOCOL_VERSION,
      executionKernel: "a2a-1.0",
      version: SERVICE_VERSION,
      agent: { a2aDialect: "1.0", name: "iac-code-agui replay kernel", version: "1.0.0" },
      // The reference adapter's field names, for monitors written against it.
      protocolPackageVersion: expect.stringMatching(/^\d+\.\d+\.\d+/),
      serverVersion: SERVICE_VERSION,
    });
    for (const secret of [TOKEN, "kernel-secret", harness.kernel.url, new URL(harness.kernel.url).port, harness.stateDir]) {
      expect(text).not.toContain(secret);
    }
  });

  it("answers /ready without the token when the kernel answers and thread state can be written, leaving no file behind", async () => {
    const response = await fetch(`${harness.service.url}/ready`);
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(await response.json()).toEqual({ ready: true, kernel: "ok", stateDir: "ok" });
    expect(readdirSync(path.join(harness.stateDir, "threads"))).toEqual([]);
  });

  it("still requires the token everywhere else", async () => {
    expect((await postRun(harness.service.url, runInput("chat"))).status).toBe(401);
    expect((await fetch(`${harness.service.url}/anything-else`)).status).toBe(401);
  });

  it.each(["/health", "/ready"])(
    "answers %s for the Host an orchestrator or load balancer names, a pod's address or any name",
    async (route) => {
      for (const host of ["10.42.7.19:8000", "10.42.7.19", "[fd00::7]:8000", "agui.internal.example", "localhost:1234"]) {
        expect({ host, status: (await get(harness.service.url, route, host)).status }).toEqual({ host, status: 200 });
      }
    },
  );

  it("keeps the Host check on every other route, for the same pod address", async () => {
    for (const route of ["/metrics", "/sandbox", "/extensions/iac-code/v1/threads/t-1/subscribe"]) {
      expect({ route, ...(await get(harness.service.url, route, "10.42.7.19:8000")) }).toEqual({
        route,
        status: 403,
        json: { error: { code: "HOST_NOT_ALLOWED", message: expect.any(String) } },
      });
    }
  });
});

describe("/ready when something is not", () => {
  it("is 503 with kernel failed when the kernel does not answer", async () => {
    const kernel = await startReplayKernel({ timeScale: 0 });
    await kernel.close();
    const service = await startService(testConfig({ a2aUrl: kernel.url }));
    try {
      const response = await fetch(`${service.url}/ready`);
      expect(response.status).toBe(503);
      expect(await response.json()).toEqual({ ready: false, kernel: "failed", stateDir: "ok" });
      expect((await fetch(`${service.url}/health`)).status).toBe(200);
    } finally {
      await service.close();
    }
  });

  it("is 503 with stateDir failed when thread state cannot be written", async () => {
    // A file where a directory should be: refused for root too, unlike a mode.
    const blocker = path.join(mkdtempSync(path.join(os.tmpdir(), "agui-probe-")), "not-a-directory");
    writeFileSync(blocker, "");
    const harness = await startHarness({}, { stateDir: path.join(blocker, "state") });
    try {
      const response = await fetch(`${harness.service.url}/ready`);
      expect(response.status).toBe(503);
      expect(await response.json()).toEqual({ ready: false, kernel: "ok", stateDir: "failed" });
    } finally {
      await harness.close();
    }
  });

  it("is 503 with draining during a shutdown, while a run still goes on", async () => {
    // Real time: `slow-chat` streams for about three seconds.
    const harness = await startHarness({ timeScale: 1 });
    try {
      const run = await openRun(harness.service.url, runInput("slow-chat"), (raw) => raw.includes("TEXT_MESSAGE_CONTENT"));
      const shutdown = harness.service.shutdown({ drainMs: 10_000 });
      const response = await fetch(`${harness.service.url}/ready`);
      expect(response.status).toBe(503);
      expect(await response.json()).toEqual({ ready: false, kernel: "ok", stateDir: "ok", draining: true });
      void harness.service.shutdown({ drainMs: 0 });
      const events = await parseSse(await run.rest);
      await expectValidRun(events);
      expect(events.at(-1)).toMatchObject({ type: EventType.RUN_ERROR, code: "SERVICE_SHUTTING_DOWN" });
      await shutdown;
    } finally {
      await harness.kernel.close();
    }
  });
});

describe("cachedCheck", () => {
  it("runs a check at most once per second however many ask, and tells a failing check as false", async () => {
    let clock = 0;
    const answers = [true, false];
    let runs = 0;
    let release: () => void = () => {};
    const check = cachedCheck(
      () =>
        new Promise<boolean>((resolve) => {
          const answer = answers[runs++] ?? false;
          release = () => resolve(answer);
        }),
      () => clock,
    );
    const waiting = [check(), check()];
    clock = 5000; // a slow check: the second counts from its answer, not from the question
    release();
    expect(await Promise.all(waiting)).toEqual([true, true]);
    expect(runs).toBe(1);
    clock = 5999;
    expect(await check()).toBe(true);
    expect(runs).toBe(1);
    clock = 6000;
    const next = check();
    release();
    expect(await next).toBe(false);
    expect(runs).toBe(2);

    const throwing = cachedCheck(() => Promise.reject(new Error("EACCES")));
    expect(await throwing()).toBe(false);
  });
});
