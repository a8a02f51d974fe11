/**
 * The session event names the execution's task and kernel session: a client
 * keeps them to cancel or observe. It is sent only once those ids are known,
 * never as `taskId: null, sessionId: null` (issue 11).
 */
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { EventType, type AGUIEvent } from "@ag-ui/core";
import { startService, type RunningService } from "../../lib/server.js";
import { expectValidRun } from "../support/agui.js";
import { interruptScript, permissionProjection } from "../support/interrupt-scripts.js";
import { postRun, runInput, startHarness, testConfig, uniqueId, type Harness } from "../support/service.js";

const sessionEvents = (events: AGUIEvent[]) =>
  events.filter((event) => event.type === EventType.CUSTOM && event.name === "iac-code.session.v1") as Array<{
    value: { taskId: string | null; sessionId: string | null };
  }>;

/** A loopback port with nothing listening on it. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe("the iac-code.session.v1 event", () => {
  let harness: Harness;
  let noKernel: RunningService;
  beforeAll(async () => {
    harness = await startHarness({ script: interruptScript("permission", permissionProjection) });
    noKernel = await startService(testConfig({ a2aUrl: `http://127.0.0.1:${await closedPort()}` }));
  });
  afterAll(async () => {
    await harness.close();
    await noKernel.close();
  });

  it("is not sent when the kernel fails before its first frame", async () => {
    const { events } = await postRun(noKernel.url, runInput("chat"));
    await expectValidRun(events);
    expect(events.at(-1)).toMatchObject({ type: EventType.RUN_ERROR, code: "A2A_UNAVAILABLE" });
    expect(sessionEvents(events)).toEqual([]);
  });

  it("names the paused task and session on a resume that is refused before anything is sent", async () => {
    const first = runInput("permission");
    const paused = await postRun(harness.service.url, first);
    const [announced] = sessionEvents(paused.events);
    expect(announced?.value.taskId).toEqual(expect.any(String));

    const refused = await postRun(harness.service.url, {
      ...first,
      runId: uniqueId("run"),
      resume: [{ interruptId: "nope", status: "cancelled" }],
    });
    await expectValidRun(refused.events);
    expect(refused.events.at(-1)).toMatchObject({ type: EventType.RUN_ERROR });
    expect(sessionEvents(refused.events).map((event) => event.value)).toEqual([
      expect.objectContaining({ taskId: announced!.value.taskId, sessionId: announced!.value.sessionId }),
    ]);
  });
});
