/**
 * Resuming after the kernel restarted (contract §5, issue 13): the
 * cold-resume preflight `ensure-restored`, then GetTask, then the answers;
 * through the real service and the demo kernel's preflight route.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { EventType, type AGUIEvent, type Interrupt } from "@ag-ui/core";
import { startReplayKernel, type FixtureLine, type ReplayKernel, type ReplayTurn } from "../../lib/kernel/replay-kernel.js";
import { startService, type RunningService } from "../../lib/server.js";
import { expectValidRun } from "../support/agui.js";
import { startDroppingProxy, type DroppingProxy } from "../support/dropping-proxy.js";
import { permissionProjection } from "../support/interrupt-scripts.js";
import { postRun, runInput, script, testConfig, uniqueId } from "../support/service.js";

type Input = ReturnType<typeof runInput>;

/** Turn 0 parks on a permission under the session `sess-<marker>-<context>`; the answer completes the task. */
function parkedUnderSession(marker: string) {
  return (turn: ReplayTurn): FixtureLine[] | undefined => {
    if (turn.turnIndex > 0) return [script.status("WORKING", undefined, "Deployed."), script.status("COMPLETED")];
    return [
      script.task(),
      script.status("WORKING", { iacCodeSessionId: `sess-${turn.text}-\${contextId}` }, `Working on ${marker}. `),
      script.status("INPUT_REQUIRED", { input: permissionProjection }),
    ];
  };
}

const runError = (events: AGUIEvent[]) => events.find((event) => event.type === EventType.RUN_ERROR) as { code?: string } | undefined;
const interruptsOf = (events: AGUIEvent[]): Interrupt[] =>
  ((events.at(-1) as { outcome?: { interrupts?: Interrupt[] } }).outcome?.interrupts ?? []) as Interrupt[];
const allow = { interruptId: "perm-1", status: "resolved", payload: { decision: "allow_once" } };

describe("resume after a kernel restart: the ensure-restored preflight", () => {
  let kernel: ReplayKernel;
  let proxy: DroppingProxy;
  let service: RunningService;
  beforeAll(async () => {
    kernel = await startReplayKernel({ timeScale: 0, script: (turn) => parkedUnderSession(turn.text)(turn) });
    proxy = await startDroppingProxy(kernel.url);
    service = await startService(testConfig({ a2aUrl: proxy.url, interruptTtlS: 600 }));
  });
  afterAll(async () => {
    await service.close();
    await proxy.close();
    await kernel.close();
  });
  const post = (body: unknown) => postRun(service.url, body);
  const resume = (first: Input, entries: unknown[]) => ({ ...first, runId: uniqueId("run"), resume: entries });
  const methods = () => kernel.received.map((call) => call.method);

  async function parked(marker: string): Promise<Input> {
    const first = runInput(marker);
    const { events } = await post(first);
    await expectValidRun(events);
    expect(interruptsOf(events).map((interrupt) => interrupt.id)).toEqual(["perm-1"]);
    return first;
  }

  it("asks ensure-restored with {cwd, sessionId, taskId} before GetTask, and goes on when the session is current", async () => {
    const first = await parked("current");
    const before = kernel.received.length;
    const { events } = await post(resume(first, [allow]));
    await expectValidRun(events);
    expect(events.at(-1)?.type).toBe(EventType.RUN_FINISHED);
    const restore = kernel.restores.at(-1)!.body as Record<string, unknown>;
    expect(restore).toEqual({
      cwd: first.forwardedProps.iacCode.cwd,
      sessionId: expect.stringMatching(/^sess-current-/),
      taskId: expect.any(String),
    });
    expect(methods().slice(before)[0]).toBe("GetTask");
  });

  it("409 SESSION_BACKUP_NOT_READY ends the run with that code, the interrupt still answerable; the retry goes through", async () => {
    const first = await parked("not-ready-once");
    const calls = kernel.received.length;
    const refused = await post(resume(first, [allow]));
    await expectValidRun(refused.events);
    expect(runError(refused.events)?.code).toBe("SESSION_BACKUP_NOT_READY");
    expect(kernel.received.length).toBe(calls); // neither GetTask nor the answer
    const retried = await post(resume(first, [allow]));
    await expectValidRun(retried.events);
    expect(retried.events.at(-1)?.type).toBe(EventType.RUN_FINISHED);
    expect(JSON.stringify(retried.events)).toContain("Deployed.");
  });

  it("404 from ensure-restored is EXECUTION_LOST with the interrupt kept, as the reference adapter keeps it", async () => {
    const first = await parked("restore-lost");
    const sent = () => methods().filter((method) => method === "SendStreamingMessage").length;
    const before = sent();
    const lost = await post(resume(first, [allow]));
    await expectValidRun(lost.events);
    expect(runError(lost.events)).toMatchObject({ code: "EXECUTION_LOST" });
    // Nothing was sent: the kernel was asked to restore and nothing else.
    expect(sent()).toBe(before);
    const again = await post(resume(first, [allow]));
    expect(runError(again.events)?.code).toBe("EXECUTION_LOST");
    // Still answerable: a new message is told what waits.
    const { status, json } = await post({
      ...first,
      runId: uniqueId("run"),
      messages: [{ id: uniqueId("m"), role: "user", content: "hello?" }],
    });
    expect(status).toBe(409);
    expect(json).toMatchObject({ error: { code: "RESUME_REQUIRED", interrupts: [expect.objectContaining({ id: "perm-1" })] } });
  });

  it("a GetTask the kernel cannot answer (down) is A2A_UNAVAILABLE with the interrupt kept; the next resume works", async () => {
    const first = await parked("getTask-down");
    proxy.dropWhen((body) => body.includes('"GetTask"'));
    const down = await post(resume(first, [allow]));
    proxy.dropWhen(undefined);
    await expectValidRun(down.events);
    expect(runError(down.events)?.code).toBe("A2A_UNAVAILABLE");
    const back = await post(resume(first, [allow]));
    await expectValidRun(back.events);
    expect(back.events.at(-1)?.type).toBe(EventType.RUN_FINISHED);
    expect(JSON.stringify(back.events)).toContain("Deployed.");
  });
});
