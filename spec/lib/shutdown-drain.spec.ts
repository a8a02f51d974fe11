/**
 * What a drain does to the runs it finds, in process (`RunningService.shutdown`):
 * a pipeline run is stopped without re-attaching to its task, and a run
 * paused at interrupts is left on disk, answerable after a restart.
 */
import { mkdtempSync, readdirSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "@jest/globals";
import { EventType, type Interrupt } from "@ag-ui/core";
import { startReplayKernel, type ReplayKernel } from "../../lib/kernel/replay-kernel.js";
import { startService, type RunningService } from "../../lib/server.js";
import { FileThreadStore } from "../../lib/state/file-thread-store.js";
import type { ThreadStore } from "../../lib/state/thread-store.js";
import { expectValidRun } from "../support/agui.js";
import { interruptScript, permissionProjection } from "../support/interrupt-scripts.js";
import { openRun, parseSse } from "../support/service-process.js";
import { postRun, runInput, testConfig, uniqueId, waitFor } from "../support/service.js";

describe("a drain", () => {
  const kernels: ReplayKernel[] = [];
  const services: RunningService[] = [];
  afterEach(async () => {
    for (const service of services.splice(0)) await service.close();
    for (const kernel of kernels.splice(0)) await kernel.close();
  });
  const kernelWith = async (options: Parameters<typeof startReplayKernel>[0]) => {
    const kernel = await startReplayKernel(options);
    kernels.push(kernel);
    return kernel;
  };
  const serviceOn = async (kernel: ReplayKernel, stateDir?: string, store?: ThreadStore) => {
    const service = await startService(testConfig({ a2aUrl: kernel.url, ...(stateDir ? { stateDir } : {}) }), store ? { store } : {});
    services.push(service);
    return service;
  };

  it("stops a pipeline run without re-attaching to its task, and cancels the task", async () => {
    const kernel = await kernelWith({ timeScale: 1 });
    const service = await serviceOn(kernel);
    const run = await openRun(service.url, runInput("slow-chat", {}, { runMode: "pipeline" }), (raw) =>
      raw.includes("TEXT_MESSAGE_CONTENT"),
    );
    const callsBefore = kernel.received.length;

    const report = await service.shutdown({ drainMs: 0 });
    expect(report).toEqual({ inFlight: 1, ended: 0, stopped: 1 });
    const events = await parseSse(await run.rest);
    await expectValidRun(events);
    expect(events.at(-1)).toMatchObject({ type: EventType.RUN_ERROR, code: "SERVICE_SHUTTING_DOWN" });
    expect(kernel.received.slice(callsBefore).map((call) => call.method)).toEqual(["CancelTask"]);
  });

  it("waits for the writes of a run whose client has just left: a process that exits then cuts none short", async () => {
    const kernel = await kernelWith({ timeScale: 1 });
    const stateDir = mkdtempSync(path.join(os.tmpdir(), "agui-drain-"));
    const files = new FileThreadStore({ stateDir });
    let writing = 0;
    // Every write lands a little late, as on a busy disk: after the client's connection has closed.
    const store: ThreadStore = {
      load: (threadId) => files.load(threadId),
      tryAcquire: (threadId) => files.tryAcquire(threadId),
      prepareWrite: (threadId) => files.prepareWrite(threadId),
      save: async (state, lease, options) => {
        writing++;
        try {
          await new Promise((resolve) => setTimeout(resolve, 100));
          await files.save(state, lease, options);
        } finally {
          writing--;
        }
      },
    };
    const service = await serviceOn(kernel, stateDir, store);
    const input = runInput("slow-chat");
    const run = await openRun(service.url, input, (raw) => raw.includes("TEXT_MESSAGE_CONTENT"));
    run.abort();
    await waitFor(() => service.idleMs() > 0);

    expect(await service.shutdown({ drainMs: 0 })).toEqual({ inFlight: 0, ended: 0, stopped: 0 });
    expect(writing).toBe(0);
    expect(readdirSync(files.threadsDir).filter((name) => name.endsWith(".tmp"))).toEqual([]);
    // The run's end is on record: its execution is over, its task let go.
    const state = await files.load(input.threadId);
    expect(state?.execution.taskId).toBeNull();
    expect(state?.terminalExecutionIds).toContain(state?.execution.executionId);
  });

  it("leaves a run paused at interrupts on disk: a restarted service resumes it", async () => {
    const kernel = await kernelWith({ timeScale: 0, script: interruptScript("permission", permissionProjection) });
    const stateDir = mkdtempSync(path.join(os.tmpdir(), "agui-drain-"));
    const before = await serviceOn(kernel, stateDir);
    const first = runInput("permission");
    const paused = await postRun(before.url, first);
    await expectValidRun(paused.events);
    const { interrupts } = (paused.events.at(-1) as { outcome: { interrupts: Interrupt[] } }).outcome;

    expect(await before.shutdown()).toEqual({ inFlight: 0, ended: 0, stopped: 0 });
    expect(kernel.received.some((call) => call.method === "CancelTask")).toBe(false);

    const after = await serviceOn(kernel, stateDir);
    const answer = {
      ...first,
      runId: uniqueId("run"),
      resume: [{ interruptId: interrupts[0]!.id, status: "resolved", payload: { decision: "allow_once" } }],
    };
    const resumed = await postRun(after.url, answer);
    await expectValidRun(resumed.events);
    expect(resumed.events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });
  });
});
