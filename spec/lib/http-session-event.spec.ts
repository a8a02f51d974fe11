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

  it("is not sent on a resume the service refuses: it would tell ROS the parked execution took an answer", async () => {
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
    expect(refused.events.at(-1)).toMatchObject({ type: EventType.RUN_ERROR, code: "UNKNOWN_INTERRUPT" });
    expect(sessionEvents(refused.events)).toEqual([]);

    // Once the kernel accepts the answer, the resume names the same task and session, before anything of the answer is shown.
    const accepted = await postRun(harness.service.url, {
      ...first,
      runId: uniqueId("run"),
      resume: [{ interruptId: "perm-1", status: "resolved", payload: { decision: "allow_once" } }],
    });
    await expectValidRun(accepted.events);
    expect(sessionEvents(accepted.events).map((event) => event.value)).toEqual([
      expect.objectContaining({ taskId: announced!.value.taskId, sessionId: announced!.value.sessionId }),
    ]);
    const announcedAt = accepted.events.findIndex((event) => event.type === EventType.CUSTOM && event.name === "iac-code.session.v1");
    const firstShown = accepted.events.findIndex(
      (event) => event.type === EventType.TOOL_CALL_RESULT || event.type === EventType.TEXT_MESSAGE_START,
    );
    expect(announcedAt).toBeLessThan(firstShown);
  });

  it.each([
    ["RESUME_PAYLOAD_INVALID", [{ interruptId: "perm-1", status: "resolved", payload: { decision: "always" } }]],
    ["INCOMPLETE_RESUME", []],
  ])("is not sent before the RUN_ERROR of a resume refused %s", async (code, resume) => {
    const first = runInput("permission");
    await postRun(harness.service.url, first);
    const refused = await postRun(harness.service.url, { ...first, runId: uniqueId("run"), resume });
    await expectValidRun(refused.events);
    expect(refused.events.at(-1)).toMatchObject({ type: EventType.RUN_ERROR, code });
    expect(sessionEvents(refused.events)).toEqual([]);
  });
});
