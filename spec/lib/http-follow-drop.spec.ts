/**
 * A dropped kernel stream in a run outside pipeline mode (contract §6 "A
 * dropped stream"), through the real service in front of the A2A 1.0
 * replay kernel: a plain chat client (`HttpAgent`, no run mode) still gets
 * the whole answer, once, through GetTask and SubscribeToTask, with no call
 * to the pipeline recovery route; a follow that also ends without a
 * boundary cancels the task and ends the run in RUN_ERROR.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { EventType } from "@ag-ui/core";
import type { FixtureLine } from "../../lib/fixtures/fixture-format.js";
import type { ReplayTurn } from "../../lib/kernel/replay-executor.js";
import { startReplayKernel, type ReplayKernel } from "../../lib/kernel/replay-kernel.js";
import { startService, type RunningService } from "../../lib/server.js";
import { expectValidRun } from "../support/agui.js";
import { httpAgent, runHttpAgent, transcript, userMessage } from "../support/http-agent.js";
import { runInput, script, testConfig, waitFor } from "../support/service.js";

const DROP: FixtureLine = { delayMs: 0, drop: true };
const SCRIPTS: Record<string, FixtureLine[]> = {
  // The line after the cut is held until the service has re-subscribed, so the live stream is what brings it.
  "drop-chat": [
    script.task(),
    script.status("WORKING", undefined, "The answer comes in two parts, "),
    DROP,
    script.status("WORKING", undefined, "and the second after the drop."),
    script.status("COMPLETED"),
  ],
  // Nothing after the cut: the task stays working, and its re-subscribe ends with no boundary either.
  "drop-again": [script.task(), script.status("WORKING", undefined, "Half an answer, "), DROP],
};

describe("a run outside pipeline mode whose kernel stream drops (A2A 1.0)", () => {
  let kernel: ReplayKernel;
  let service: RunningService;
  let releaseHeld: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (releaseHeld = resolve));
  const holdAfterDrop = (turn: ReplayTurn, index: number) => (turn.text === "drop-chat" && index === 3 ? held : undefined);

  beforeAll(async () => {
    kernel = await startReplayKernel({ timeScale: 0, script: (turn) => SCRIPTS[turn.text], holdLine: holdAfterDrop });
    service = await startService(testConfig({ a2aUrl: kernel.url }));
  });
  afterAll(async () => {
    releaseHeld();
    await service.close();
    await kernel.close();
  });

  const calls = (method: string, taskId?: string) =>
    kernel.received.filter((call) => call.method === method && (taskId === undefined || (call.params as { id?: string }).id === taskId));
  const chat = (text: string) => {
    const agent = httpAgent(service.url, { messages: [userMessage(text)] });
    return runHttpAgent(agent, { forwardedProps: runInput("").forwardedProps });
  };
  const taskIdOf = (events: readonly { type: string; name?: string; value?: unknown }[]) =>
    (events.find((event) => event.type === EventType.CUSTOM && event.name === "iac-code.session.v1")?.value as { taskId: string }).taskId;

  it("drop-chat: HttpAgent ends with the whole answer once, followed through GetTask and SubscribeToTask", async () => {
    const subscribes = calls("SubscribeToTask").length;
    const recoveries = kernel.recoveries.length;
    const running = chat("drop-chat");
    await waitFor(() => calls("SubscribeToTask").length > subscribes);
    // The SDK joins the task's events right after the snapshot it answers first; the held line comes after that.
    await new Promise((resolve) => setImmediate(resolve));
    releaseHeld();
    const run = await running;

    expect(run.error).toBeUndefined();
    await expectValidRun(run.events);
    const taskId = taskIdOf(run.events);
    expect(calls("GetTask", taskId).length).toBeGreaterThan(0);
    expect(calls("SubscribeToTask", taskId)).toHaveLength(1);
    expect(kernel.recoveries.length).toBe(recoveries);
    expect(transcript(run.messages)).toEqual([
      { role: "user", content: "drop-chat" },
      { role: "assistant", content: "The answer comes in two parts, and the second after the drop." },
    ]);
    expect(run.events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });
    expect(calls("CancelTask", taskId)).toEqual([]);
  });

  it("drop-again: a follow that ends without a boundary too cancels the task and ends in RUN_ERROR", async () => {
    const run = await chat("drop-again");

    await expectValidRun(run.events);
    const taskId = taskIdOf(run.events);
    expect(calls("SubscribeToTask", taskId)).toHaveLength(1);
    expect(run.events.at(-1)).toMatchObject({ type: EventType.RUN_ERROR, code: "A2A_EXECUTION_FAILED" });
    // The text the client had before the drop is not sent again by the follow.
    expect(transcript(run.messages)).toEqual([
      { role: "user", content: "drop-again" },
      { role: "assistant", content: "Half an answer, " },
    ]);
    await waitFor(() => calls("CancelTask", taskId).length > 0);
  });
});
