/**
 * `npm run soak`: the slow runs. Many more generated kernel streams and
 * fuzzed requests than `npm test` sends, and 1,000 runs in a row with the
 * heap and the open handles compared after a full GC (run with --expose-gc).
 */
import type { ChildProcess } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import fc from "fast-check";
import { startService, type RunningService } from "../lib/server.js";
import { anyKernelStreamIsAValidRun } from "../spec/support/chain-properties.js";
import { fuzzRequest } from "../spec/support/fuzz-bodies.js";
import { expectAnswerNever5xx } from "../spec/support/fuzz-http.js";
import { expectValidRun } from "../spec/support/agui.js";
import { postRun, runInput, testConfig } from "../spec/support/service.js";
import { forkKernel } from "./kernel-process.js";

const gc = () => {
  const collect = (globalThis as { gc?: () => void }).gc;
  if (!collect) throw new Error("run the soak with --expose-gc (npm run soak)");
  collect();
  collect();
};

describe("soak", () => {
  let kernel: ChildProcess;
  let service: RunningService;
  beforeAll(async () => {
    const forked = await forkKernel();
    kernel = forked.child;
    service = await startService(testConfig({ a2aUrl: forked.url }));
  });
  afterAll(async () => {
    await service.close();
    kernel.kill("SIGTERM");
  });

  it("turns 20,000 generated kernel streams into valid AG-UI runs", async () => {
    await anyKernelStreamIsAValidRun(20_000);
  });

  it("answers 20,000 fuzzed requests without a 5xx", async () => {
    await fc.assert(
      fc.asyncProperty(fuzzRequest, (request) => expectAnswerNever5xx(service.url, request)),
      { numRuns: 20_000 },
    );
    expect((await fetch(`${service.url}/health`)).status).toBe(200);
  });

  it("runs 1,000 runs in a row without growing the heap or the open handles", async () => {
    const run = async (fixture: string) => {
      const { events } = await postRun(service.url, runInput(fixture));
      await expectValidRun(events);
    };
    const fixtures = ["chat", "reasoning-tools", "failing-run", "whole-text", "stream-error"];
    for (let i = 0; i < 100; i++) await run(fixtures[i % fixtures.length]!);
    gc();
    const heapBefore = process.memoryUsage().heapUsed;
    const handlesBefore = process.getActiveResourcesInfo().length;
    for (let i = 0; i < 1_000; i++) await run(fixtures[i % fixtures.length]!);
    gc();
    const heapGrowth = process.memoryUsage().heapUsed - heapBefore;
    const handlesAfter = process.getActiveResourcesInfo().length;
    console.log(`1,000 runs: heap ${(heapGrowth / 1024).toFixed(0)} KiB, handles ${handlesBefore} → ${handlesAfter}`);
    // Under 2 KiB a run: noise, not a leak (a leak of even a run's events would be ~10 KiB a run).
    expect(heapGrowth).toBeLessThan(2 * 1024 * 1024);
    expect(handlesAfter).toBeLessThanOrEqual(handlesBefore + 2);
  });
});
