/**
 * An idle stream's heartbeats are cheap: a client that takes each one at
 * once never makes the service read the system's connection tables
 * (`system-send-queue.ts`), which costs milliseconds of system time per
 * thousand connections each time. Those are for a client that leaves bytes
 * waiting. Before this held, every heartbeat of every stream asked for a
 * reading, and 1,000 idle streams beating every 2 s kept a third of a core
 * busy.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { EventType, type AGUIEvent } from "@ag-ui/core";
import { systemTableReadings } from "../../lib/http/system-send-queue.js";
import { startService, type RunningService } from "../../lib/server.js";
import { expectValidRun } from "../support/agui.js";
import { startBurstKernel, type BurstKernel } from "../support/burst-kernel.js";
import { openRun, parseSse } from "../support/service-process.js";
import { runInput, testConfig } from "../support/service.js";

const STREAMS = 3;
const BEATS = 30;

const heartbeats = (raw: string) => raw.split(": heartbeat\n").length - 1;

const sessionOf = (events: AGUIEvent[]) =>
  (events.find((event) => event.type === EventType.CUSTOM && event.name === "iac-code.session.v1") as { value: { executionId: string } })
    .value;

(process.platform === "linux" ? describe : describe.skip)("idle streams whose clients take every heartbeat", () => {
  let kernel: BurstKernel;
  let service: RunningService;
  beforeAll(async () => {
    kernel = await startBurstKernel();
    service = await startService(testConfig({ a2aUrl: kernel.url, heartbeatMs: 10 }));
  });
  afterAll(async () => {
    await service.close();
    await kernel.close();
  });

  it("never make the service read the system's tables, and end as usual when cancelled", async () => {
    const readingsBefore = systemTableReadings();
    const inputs = Array.from({ length: STREAMS }, () => runInput(JSON.stringify({ deltas: 1, hold: true })));
    const runs = await Promise.all(inputs.map((input) => openRun(service.url, input, (raw) => heartbeats(raw) >= BEATS)));

    expect(systemTableReadings()).toBe(readingsBefore);

    for (const [index, run] of runs.entries()) {
      const { executionId } = sessionOf(await parseSse(run.raw.slice(0, run.raw.lastIndexOf("\n\n") + 2)));
      const response = await fetch(`${service.url}/extensions/iac-code/v1/executions/${executionId}/cancel`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ threadId: inputs[index]!.threadId, rosInvocationId: "ros-1" }),
      });
      expect(await response.json()).toMatchObject({ status: "cancelled" });
      const events = await parseSse(await run.rest);
      await expectValidRun(events);
      expect(events.at(-1)).toMatchObject({ type: EventType.RUN_ERROR, code: "CANCELLED" });
    }
  });
});
