/**
 * Retention through the real service (IAC_CODE_AGUI_THREAD_RETENTION_S=1,
 * the file store): a thread whose run ended is removed once idle, counted
 * on /metrics, and starts afresh on its next message; a thread paused at an
 * interrupt that has not expired stays, and its answer is still taken.
 */
import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { EventType, type AGUIEvent } from "@ag-ui/core";
import { FileThreadStore } from "../../lib/state/file-thread-store.js";
import { expectValidRun } from "../support/agui.js";
import { postRun, runInput, startHarness, uniqueId, type Harness } from "../support/service.js";

const outcomeOf = (events: AGUIEvent[]) =>
  events.at(-1) as { type: EventType; outcome?: { type: string; interrupts?: Array<{ id: string }> } };

describe("thread retention in the service", () => {
  let harness: Harness;
  let files: FileThreadStore;
  beforeAll(async () => {
    // The shortest retention: a sweep every second, each thread idle after one.
    harness = await startHarness({}, { threadRetentionS: 1, interruptTtlS: 540 });
    files = new FileThreadStore({ stateDir: harness.stateDir });
  });
  afterAll(() => harness.close());

  async function metricsUntil(done: (text: string) => boolean, timeoutMs = 15_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!done(await (await fetch(`${harness.service.url}/metrics`)).text())) {
      if (Date.now() > deadline) throw new Error("the metric never showed the removal");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  it("removes an idle thread, counts it, keeps a paused one, and both go on", async () => {
    // Paused first, so it has been idle longer than the other when the other goes.
    const paused = runInput("question");
    const asked = await postRun(harness.service.url, paused);
    expect(outcomeOf(asked.events)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "interrupt" } });
    const idle = runInput("chat");
    const answered = await postRun(harness.service.url, idle);
    expect(outcomeOf(answered.events)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });
    expect(existsSync(files.fileFor(idle.threadId))).toBe(true);

    // A sweep counts its removals once it is over: the count is what to wait for.
    await metricsUntil((text) => /^iac_code_agui_threads_removed_total 1$/m.test(text));
    expect(existsSync(files.fileFor(idle.threadId))).toBe(false);
    // The sweep that removed it looked at every file there, the paused thread's among them, idle even longer.
    expect(existsSync(files.fileFor(paused.threadId))).toBe(true);

    // The paused thread's answer is taken as if nothing happened.
    const interrupt = outcomeOf(asked.events).outcome!.interrupts![0]!;
    const resumed = await postRun(harness.service.url, {
      ...paused,
      runId: uniqueId("run"),
      resume: [{ interruptId: interrupt.id, status: "resolved", payload: { selectedId: "cn-shanghai" } }],
    });
    await expectValidRun(resumed.events);
    expect(outcomeOf(resumed.events)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });

    // The removed thread starts afresh on its next message, a run id it saw before included.
    const again = await postRun(harness.service.url, { ...idle, runId: uniqueId("run") });
    await expectValidRun(again.events);
    expect(outcomeOf(again.events)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });
  });
});
