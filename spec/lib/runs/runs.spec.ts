/**
 * The run lifecycle without HTTP: `Runs` in front of a real replay kernel and
 * a file store, driven by a client of the test's own. What a route does in
 * three lines (parse, call, pipe) is done here by hand, so the service's
 * operations are shown to stand on their own.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { EventType, type AGUIEvent } from "@ag-ui/core";
import { lastValueFrom, toArray } from "rxjs";
import { A2AClient } from "../../../lib/a2a/client.js";
import { AguiError } from "../../../lib/errors.js";
import { startReplayKernel, type ReplayKernel } from "../../../lib/kernel/replay-kernel.js";
import { silentLogger } from "../../../lib/log.js";
import { HEARTBEAT } from "../../../operators/merge-heartbeat.js";
import type { SseItem } from "../../../lib/run-pipeline.js";
import { Runs, type RunClient } from "../../../lib/runs/runs.js";
import { FileThreadStore } from "../../../lib/state/file-thread-store.js";
import { expectValidRun } from "../../support/agui.js";
import { runInput, script, waitFor } from "../../support/service.js";

/** A client that reads everything and closes when told. */
function testClient(): RunClient & { close(finished: boolean): void } {
  const listeners: Array<(finished: boolean) => void> = [];
  return {
    language: "en",
    log: silentLogger,
    onClose: (listener) => void listeners.push(listener),
    close: (finished) => listeners.splice(0).forEach((listener) => listener(finished)),
  };
}

const eventsOf = async (items: Promise<import("rxjs").Observable<SseItem>>): Promise<AGUIEvent[]> =>
  (await lastValueFrom((await items).pipe(toArray()))).filter((item): item is AGUIEvent => item !== HEARTBEAT);

describe("Runs", () => {
  let kernel: ReplayKernel;
  let runs: Runs;
  const config = {
    allowedCwds: [os.tmpdir()],
    defaultCwd: undefined,
    clientTools: undefined,
    heartbeatMs: 15_000,
    interruptTtlS: 540,
    disconnectGraceMs: 0,
  };

  beforeAll(async () => {
    kernel = await startReplayKernel({
      timeScale: 0,
      script: (turn) =>
        turn.text === "hello" ? [script.task(), script.status("WORKING", undefined, "Hi. "), script.status("COMPLETED")] : undefined,
    });
    const store = new FileThreadStore({ stateDir: mkdtempSync(path.join(os.tmpdir(), "agui-runs-")) });
    runs = new Runs({ config, a2a: new A2AClient({ url: kernel.url }), store });
  });
  afterAll(() => kernel.close());

  it("starts a run from a RunAgentInput: a valid stream with the kernel's answer, and the thread free after it", async () => {
    const input = runInput("hello");
    const client = testClient();
    const events = await eventsOf(runs.start(input, client));
    client.close(true);
    await expectValidRun(events);
    expect(events[0]).toMatchObject({ type: EventType.RUN_STARTED, threadId: input.threadId, runId: input.runId });
    expect(
      events.filter((event) => event.type === EventType.TEXT_MESSAGE_CONTENT).map((event) => (event as { delta: string }).delta),
    ).toEqual(["Hi. "]);
    expect(events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });

    // The thread was let go: the next turn is admitted, and an observer finds it at rest.
    const next = runInput("hello", { threadId: input.threadId });
    const again = await eventsOf(runs.start(next, testClient()));
    expect(again.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED });
    const observed = await eventsOf(runs.observe({ threadId: input.threadId }, testClient()));
    await expectValidRun(observed);
    expect(observed.find((event) => event.type === EventType.MESSAGES_SNAPSHOT)).toMatchObject({
      messages: [
        { role: "user", content: "hello" },
        { role: "assistant", content: "Hi. " },
        { role: "user", content: "hello" },
        { role: "assistant", content: "Hi. " },
      ],
    });
  });

  const streamRequests = () => kernel.received.filter((call) => call.method === "SendStreamingMessage").length;

  it("sends a new turn's request once it is admitted, before its events are read; what the kernel said waits for them", async () => {
    const input = runInput("hello");
    const before = streamRequests();
    const run$ = await runs.start(input, testClient());
    // Nobody reads the run yet, and the kernel has the request: it answers (the replay kernel at once) into the run.
    await waitFor(() => streamRequests() === before + 1);
    // Time for the answer to arrive before anyone reads it (the run is whole either way).
    await new Promise((resolve) => setTimeout(resolve, 50));
    const events = await eventsOf(Promise.resolve(run$));
    await expectValidRun(events);
    expect(
      events.filter((event) => event.type === EventType.TEXT_MESSAGE_CONTENT).map((event) => (event as { delta: string }).delta),
    ).toEqual(["Hi. "]);
    expect(events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });
  });

  it("sends nothing to the kernel for a run it refuses: a duplicate run id, a busy thread", async () => {
    const input = runInput("hello");
    await eventsOf(runs.start(input, testClient()));
    const before = streamRequests();
    await expect(runs.start(input, testClient())).rejects.toMatchObject({ code: "DUPLICATE_RUN_ID" });
    // The thread held by a run nobody reads yet: a second run on it is refused, and only the first reached the kernel.
    const holding = await runs.start(runInput("hello", { threadId: input.threadId }), testClient());
    await expect(runs.start(runInput("hello", { threadId: input.threadId }), testClient())).rejects.toMatchObject({
      code: "THREAD_BUSY",
    });
    expect(streamRequests()).toBe(before + 1);
    await eventsOf(Promise.resolve(holding));
  });

  it("gives the thread back when the run's events are read only to be left at once (its client went first)", async () => {
    const input = runInput("hello");
    const run$ = await runs.start(input, testClient());
    run$.subscribe().unsubscribe();
    // The lease goes back as the run is left: the thread's next turn is admitted.
    const next = runInput("hello", { threadId: input.threadId });
    let admitted: Awaited<ReturnType<Runs["start"]>> | undefined;
    for (let attempt = 0; admitted === undefined && attempt < 50; attempt++) {
      admitted = await runs.start(next, testClient()).catch(async (error: unknown) => {
        if ((error as AguiError).code !== "THREAD_BUSY") throw error;
        await new Promise((resolve) => setTimeout(resolve, 20));
        return undefined;
      });
    }
    expect(admitted).toBeDefined();
    const events = await eventsOf(Promise.resolve(admitted!));
    expect(events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED });
  });

  it("refuses what a route would answer as an error before any stream: bad input, an unknown execution, a drain", async () => {
    await expect(runs.start({ threadId: "t" }, testClient())).rejects.toMatchObject({ code: "INVALID_INPUT" });
    await expect(runs.observe({ threadId: "never-ran", executionId: "e" }, testClient())).rejects.toMatchObject({
      code: "EXECUTION_NOT_FOUND",
    });
    await expect(runs.cancel("e", { threadId: "never-ran", rosInvocationId: "r" })).rejects.toMatchObject({ code: "EXECUTION_NOT_FOUND" });

    const draining = runs.registry.drain({ windowMs: 1_000, reason: new AguiError("SERVICE_SHUTTING_DOWN") });
    const refusal = await runs.start(runInput("hello"), testClient()).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(AguiError);
    expect(refusal).toMatchObject({ code: "SERVICE_UNAVAILABLE", retryAfterS: 1 });
    await draining;
  });
});
