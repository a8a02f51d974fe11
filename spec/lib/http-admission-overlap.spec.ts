/**
 * The admission's durable write and the kernel call overlap (time to the
 * first event), and persist-before-announce still holds: nothing the kernel
 * says is told before the run is recorded, and a write that fails ends the
 * run with STATE_UNAVAILABLE, cancels its task and leaves the thread as it was.
 */
import { readdirSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { EventType } from "@ag-ui/core";
import { pipe, tap, type OperatorFunction } from "rxjs";
import type { KernelSignal } from "../../lib/model/kernel-signal.js";
import { FileThreadStore } from "../../lib/state/file-thread-store.js";
import type { ThreadState } from "../../lib/state/thread-state.js";
import type { SaveOptions, ThreadLease } from "../../lib/state/thread-store.js";
import { expectValidRun } from "../support/agui.js";
import { postRun, runInput, script, startHarness, testConfig, waitFor, type Harness } from "../support/service.js";

/** The admission's write records the run, before the run has learned its task. */
const isAdmissionWrite = (state: ThreadState, runId: string) => state.runDigests[runId] !== undefined && state.execution.taskId === null;

describe("the admission's write, overlapping the kernel call", () => {
  let harness: Harness;
  let files: FileThreadStore;
  /** What happened, in order: the admission's write committing, signals reaching persistIds, events leaving projectText. */
  const order: string[] = [];
  let heldRunId: string | undefined;
  let releaseHeld: (() => void) | undefined;
  let failRunId: string | undefined;

  beforeAll(async () => {
    const config = testConfig();
    files = new FileThreadStore({ stateDir: config.stateDir });
    const store = {
      load: (threadId: string) => files.load(threadId),
      tryAcquire: (threadId: string) => files.tryAcquire(threadId),
      prepareWrite: (threadId: string) => files.prepareWrite(threadId),
      save: async (state: ThreadState, lease?: ThreadLease, options?: SaveOptions) => {
        if (failRunId !== undefined && isAdmissionWrite(state, failRunId)) {
          // A save takes over the write begun ahead for it, failing or not.
          options?.prepared?.discard();
          throw new Error("disk full");
        }
        if (heldRunId !== undefined && isAdmissionWrite(state, heldRunId)) {
          heldRunId = undefined;
          await new Promise<void>((resolve) => (releaseHeld = resolve));
          await files.save(state, lease, options);
          order.push("admission committed");
          return;
        }
        await files.save(state, lease, options);
      },
    };
    const instrument = <A, B>(stage: string, operator: OperatorFunction<A, B>): OperatorFunction<A, B> => {
      if (stage === "persistIds")
        return pipe(
          tap((signal) => order.push(`in ${(signal as KernelSignal).kind}`)),
          operator,
        );
      if (stage === "projectText")
        return pipe(
          operator,
          tap((event) => order.push(`out ${(event as { type: string }).type}`)),
        );
      return operator;
    };
    const lines = [script.task(), script.status("WORKING", undefined, "Hello"), script.status("COMPLETED")];
    // "slow" keeps its task working, so a cancel has something to cancel.
    const slow = [script.task(), script.status("WORKING", undefined, "..."), { delayMs: 600_000, frame: script.status("COMPLETED").frame }];
    harness = await startHarness(
      { script: (turn) => (turn.text === "slow" ? slow : lines), timeScale: 1 },
      { stateDir: config.stateDir },
      { store, instrument },
    );
  });
  afterAll(() => harness.close());

  it("calls the kernel while the write is under way, and tells what it said only once the write has committed", async () => {
    const input = runInput("hello");
    heldRunId = input.runId;
    const answer = postRun(harness.service.url, input);
    // The kernel is called while the admission's write is still held...
    await waitFor(() => releaseHeld !== undefined && harness.kernel.received.some((call) => call.method === "SendStreamingMessage"));
    // ...and its first frame has reached the run, which holds it (and reads no further): nothing is projected yet.
    await waitFor(() => order.includes("in task-bound"));
    expect(order.filter((entry) => entry.startsWith("out "))).toEqual([]);
    releaseHeld!();
    const { events } = await answer;
    await expectValidRun(events);
    expect(events.map((event) => event.type)).toContain(EventType.TEXT_MESSAGE_CONTENT);
    expect(events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED });
    expect(order.indexOf("admission committed")).toBeLessThan(order.indexOf("out TEXT_MESSAGE_CONTENT"));
    // The run is on record: the same request again is a duplicate.
    expect((await postRun(harness.service.url, input)).json).toMatchObject({ error: { code: "DUPLICATE_RUN_ID" } });
  });

  it("calls the kernel for no refused run: the same run again, while its write is held and after, or another on its thread", async () => {
    const streamRequests = () => harness.kernel.received.filter((call) => call.method === "SendStreamingMessage").length;
    const input = runInput("hello");
    heldRunId = input.runId;
    const before = streamRequests();
    const answer = postRun(harness.service.url, input);
    await waitFor(() => releaseHeld !== undefined && streamRequests() === before + 1);
    // While the run is admitted but not yet on disk, the thread is its: the same request and another are refused.
    expect((await postRun(harness.service.url, input)).json).toMatchObject({ error: { code: "THREAD_BUSY" } });
    const other = runInput("hello", { threadId: input.threadId });
    expect((await postRun(harness.service.url, other)).json).toMatchObject({ error: { code: "THREAD_BUSY" } });
    releaseHeld!();
    await expectValidRun((await answer).events);
    expect((await postRun(harness.service.url, input)).json).toMatchObject({ error: { code: "DUPLICATE_RUN_ID" } });
    expect(streamRequests()).toBe(before + 1);
    // Each refused run's write, begun ahead of its checks, was thrown away.
    await waitFor(() => readdirSync(files.threadsDir).every((name) => !name.endsWith(".tmp")));
  });

  it("ends with RUN_ERROR STATE_UNAVAILABLE when the write fails, cancels the task, and leaves the thread as it was", async () => {
    const input = runInput("slow");
    failRunId = input.runId;
    const { events } = await postRun(harness.service.url, input);
    failRunId = undefined;
    await expectValidRun(events);
    expect(events.map((event) => event.type)).toEqual([EventType.RUN_STARTED, EventType.RUN_ERROR]);
    expect(events.at(-1)).toMatchObject({ code: "STATE_UNAVAILABLE" });
    // The task the kernel started was never written down: it is found by its context and cancelled.
    await waitFor(() => harness.kernel.received.some((call) => call.method === "CancelTask"));
    expect(await files.load(input.threadId)).toBeUndefined();
    // Nothing was recorded, so the same request is admitted once the store writes again.
    const retried = await fetch(harness.service.url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify(input),
    });
    expect(retried.status).toBe(200);
    await retried.body?.cancel();
  });
});
