/**
 * Graceful shutdown (SIGTERM, SIGINT) of the command as operators run it:
 * no new run is accepted (503 SERVICE_UNAVAILABLE, Retry-After), runs in
 * flight get IAC_CODE_AGUI_DRAIN_S to end, and each one still running then
 * ends with RUN_ERROR SERVICE_SHUTTING_DOWN, its spans closed, its task
 * cancelled and its recording written, before the process exits 0.
 *
 * Whether a run is still going when the window ends is the test's to say,
 * not the machine's speed: the kernel holds the run's last line until the
 * test lets it go (`holdLine`), so a loaded machine cannot make a run end
 * early, nor a short window miss a run that ends on its own.
 */
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "@jest/globals";
import { EventType } from "@ag-ui/core";
import { startReplayKernel, type ReplayKernel, type ReplayTurn } from "../../lib/kernel/replay-kernel.js";
import { expectValidRun } from "../support/agui.js";
import { openRun, parseSse, startServiceProcess, type ServiceProcess } from "../support/service-process.js";
import { runInput, waitFor } from "../support/service.js";

describe("shutting the service down", () => {
  let kernel: ReplayKernel;
  const processes: ServiceProcess[] = [];
  /** Lets the held last line of the `slow-chat` turns go: their runs end then, and not before. */
  let releaseLastLines: () => void = () => undefined;
  let lastLinesHeld: Promise<void>;
  const holdLastLines = () => {
    lastLinesHeld = new Promise<void>((resolve) => (releaseLastLines = resolve));
  };
  const holdLine = (turn: ReplayTurn, index: number, count: number) =>
    turn.text === "slow-chat" && index === count - 1 ? lastLinesHeld : undefined;

  beforeAll(async () => {
    kernel = await startReplayKernel({ timeScale: 0, holdLine });
  });
  beforeEach(holdLastLines);
  afterEach(() => {
    releaseLastLines();
    for (const running of processes.splice(0)) running.child.kill("SIGKILL");
  });
  afterAll(() => kernel.close());

  const start = async (env: Record<string, string>) => {
    const service = await startServiceProcess({
      IAC_CODE_AGUI_A2A_URL: kernel.url,
      IAC_CODE_AGUI_STATE_DIR: mkdtempSync(path.join(os.tmpdir(), "agui-shutdown-")),
      IAC_CODE_AGUI_ALLOWED_CWDS: os.tmpdir(),
      ...env,
    });
    processes.push(service);
    return service;
  };
  const taskIdOf = async (raw: string) => {
    const session = (await parseSse(raw)).find((event) => event.type === EventType.CUSTOM && event.name === "iac-code.session.v1");
    return (session as { value: { taskId: string } }).value.taskId;
  };
  const cancelled = (taskId: string) =>
    kernel.received.some((call) => call.method === "CancelTask" && (call.params as { id: string }).id === taskId);
  const underWay = (raw: string) => raw.includes("iac-code.session.v1") && raw.includes("TEXT_MESSAGE_CONTENT");
  const logged = (service: ServiceProcess, message: RegExp) => service.records().find((record) => message.test(record.msg));
  /** The time between two of the service's log records, by its own clock. */
  const msBetween = (from: Record<string, unknown> | undefined, to: Record<string, unknown> | undefined) =>
    Date.parse(String(to?.time)) - Date.parse(String(from?.time));

  it("on SIGTERM refuses new runs, then ends a run still going after the drain window with RUN_ERROR, cancelled and recorded", async () => {
    const recordDir = mkdtempSync(path.join(os.tmpdir(), "agui-shutdown-record-"));
    const service = await start({ IAC_CODE_AGUI_DRAIN_S: "1", IAC_CODE_AGUI_RECORD_DIR: recordDir });
    const run = await openRun(service.url, runInput("slow-chat"), underWay);
    const taskId = await taskIdOf(run.raw);

    service.child.kill("SIGTERM");
    await waitFor(() => logged(service, /draining/) !== undefined, 15_000);
    const refused = await fetch(service.url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(runInput("chat")),
    });
    expect(refused.status).toBe(503);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(await refused.json()).toMatchObject({ error: { code: "SERVICE_UNAVAILABLE" } });

    const events = await parseSse(await run.rest);
    await expectValidRun(events);
    expect(events.at(-1)).toMatchObject({ type: EventType.RUN_ERROR, code: "SERVICE_SHUTTING_DOWN" });
    expect(await service.exited).toEqual({ code: 0, signal: null });
    // The kernel still holds the run's last line: only the window's end could stop it, and not before the window was over.
    expect(cancelled(taskId)).toBe(true);
    const report = logged(service, /1 run stopped with SERVICE_SHUTTING_DOWN/);
    expect(report).toMatchObject({ level: "info", inFlight: 1, stopped: 1 });
    // Less a millisecond: the window is timed on a monotonic clock, the records stamped with the wall clock.
    expect(msBetween(logged(service, /draining/), report)).toBeGreaterThanOrEqual(999);
    // The run it stopped: one RUN_ERROR, logged once with its code and ids.
    expect(service.records().filter((record) => record.code === "SERVICE_SHUTTING_DOWN")).toEqual([
      expect.objectContaining({ level: "warn", taskId, msg: expect.stringMatching(/RUN_ERROR/) }),
    ]);
    expect(service.stderr()).toBe("");

    const recordings = readdirSync(recordDir).filter((name) => name.endsWith(".jsonl"));
    expect(recordings).toHaveLength(1);
    expect(readFileSync(path.join(recordDir, recordings[0]!), "utf8")).toContain("This answer ");
  });

  it("on SIGINT lets a run that ends within the drain window finish, then exits 0", async () => {
    // A window far longer than the test may take: the run ends in it however slow the machine is.
    const service = await start({ IAC_CODE_AGUI_DRAIN_S: "600" });
    const run = await openRun(service.url, runInput("slow-chat"), underWay);
    const taskId = await taskIdOf(run.raw);

    service.child.kill("SIGINT");
    // The run is still going when the drain begins; it ends only then.
    await waitFor(() => logged(service, /draining/) !== undefined, 15_000);
    releaseLastLines();
    const events = await parseSse(await run.rest);
    await expectValidRun(events);
    expect(events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });
    expect(await service.exited).toEqual({ code: 0, signal: null });
    expect(cancelled(taskId)).toBe(false);
    expect(logged(service, /1 run ended within the drain window/)).toMatchObject({ level: "info", inFlight: 1, ended: 1 });
  });
});
