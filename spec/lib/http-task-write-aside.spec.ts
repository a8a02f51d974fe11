/**
 * The task's id is written beside the stream, not in its way (time to the
 * first event): what the kernel says goes on once the run is recorded, and
 * only what announces the task as recoverable (the session event, the run's
 * end) waits for the task's write (R-PER-4). A task write that fails after
 * text was shown still ends the run with STATE_PERSISTENCE_FAILED and
 * cancels the task.
 */
import os from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { EventType, type AGUIEvent } from "@ag-ui/core";
import { pipe, tap, type OperatorFunction } from "rxjs";
import { FileThreadStore } from "../../lib/state/file-thread-store.js";
import type { ThreadState } from "../../lib/state/thread-state.js";
import type { SaveOptions, ThreadLease } from "../../lib/state/thread-store.js";
import { expectValidRun } from "../support/agui.js";
import { httpAgent, runHttpAgent, transcript, userMessage } from "../support/http-agent.js";
import { script, startHarness, testConfig, uniqueId, waitFor, type Harness } from "../support/service.js";

const SESSION = "iac-code.session.v1";

describe("the task's write, beside the run's stream", () => {
  let harness: Harness;
  let files: FileThreadStore;
  /** What happened, in order: the task's write committing or failing, and the events leaving the chain's stages. */
  const order: string[] = [];
  /** The thread whose task write is held, and what the test does with it once released. */
  let held: { threadId: string; release?: (outcome: "commit" | "fail") => void } | undefined;

  /** The first write of the held thread that names its task (the admission's names none). */
  const isTaskWrite = (state: ThreadState) => state.execution.taskId !== null && held?.release === undefined;

  beforeAll(async () => {
    const config = testConfig();
    files = new FileThreadStore({ stateDir: config.stateDir });
    const store = {
      load: (threadId: string) => files.load(threadId),
      tryAcquire: (threadId: string) => files.tryAcquire(threadId),
      save: async (state: ThreadState, lease?: ThreadLease, options?: SaveOptions) => {
        const holding = held;
        if (holding?.threadId === state.threadId && isTaskWrite(state)) {
          await options?.after;
          const outcome = await new Promise<"commit" | "fail">((resolve) => (holding.release = resolve));
          if (outcome === "fail") {
            order.push("task write failed");
            throw new Error("disk full");
          }
          await files.save(state, lease);
          order.push("task committed");
          return;
        }
        await files.save(state, lease, options);
      },
    };
    const instrument = <A, B>(stage: string, operator: OperatorFunction<A, B>): OperatorFunction<A, B> => {
      if (stage !== "announceSession") return operator;
      return pipe(
        operator,
        tap((item) => {
          const event = item as AGUIEvent & { name?: string };
          if (event.type === EventType.CUSTOM && event.name === SESSION) order.push("out session");
          if (event.type === EventType.TEXT_MESSAGE_CONTENT) order.push("out text");
          if ((item as { kind?: string }).kind === "run-end") order.push("out end");
        }),
      );
    };
    const session = { iacCodeSessionId: "kernel-session-1" };
    const answer = [
      script.task(),
      script.status("WORKING", session, "Hello"),
      script.status("WORKING", session, " world"),
      script.status("COMPLETED", session),
    ];
    // "slow" keeps its task working, so a cancel has something to cancel.
    const slow = [
      script.task(),
      script.status("WORKING", session, "Hello"),
      { delayMs: 600_000, frame: script.status("COMPLETED", session).frame },
    ];
    harness = await startHarness(
      { script: (turn) => (turn.text === "slow" ? slow : answer), timeScale: 1 },
      { stateDir: config.stateDir },
      { store, instrument },
    );
  });
  afterAll(() => harness.close());

  const forwardedProps = { iacCode: { schemaVersion: 1, rosInvocationId: "ros-1", cwd: os.tmpdir() } };

  it("shows the kernel's text while the task's write is under way, and the session event only once it has committed", async () => {
    order.length = 0;
    const threadId = uniqueId("thread");
    held = { threadId };
    const agent = httpAgent(harness.service.url, { threadId, messages: [userMessage("hello")] });
    const running = runHttpAgent(agent, { runId: uniqueId("run"), forwardedProps });
    // The text is shown while the task's write is still held, and nothing has announced the task yet.
    await waitFor(() => order.includes("out text") && held?.release !== undefined);
    expect(order).not.toContain("out session");
    held.release!("commit");
    const run = await running;
    held = undefined;

    expect(run.error).toBeUndefined();
    await expectValidRun(run.events);
    expect(order.indexOf("task committed")).toBeGreaterThan(order.indexOf("out text"));
    expect(order.indexOf("out session")).toBeGreaterThan(order.indexOf("task committed"));
    const sessions = run.events.filter((event) => event.type === EventType.CUSTOM && event.name === SESSION);
    expect(sessions).toEqual([
      expect.objectContaining({ value: expect.objectContaining({ taskId: expect.any(String), sessionId: "kernel-session-1" }) }),
    ]);
    // The run's end waited for the write too.
    expect(order.indexOf("out end")).toBeGreaterThan(order.indexOf("task committed"));
    expect(run.events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED });
    expect(transcript(run.messages)).toEqual([
      { role: "user", content: "hello" },
      { role: "assistant", content: "Hello world" },
    ]);
  });

  it("ends with RUN_ERROR STATE_PERSISTENCE_FAILED, the task cancelled, when the task's write fails after text was shown", async () => {
    order.length = 0;
    const threadId = uniqueId("thread");
    held = { threadId };
    const calls = (method: string) => harness.kernel.received.filter((call) => call.method === method);
    const cancelsBefore = calls("CancelTask").length;
    const listsBefore = calls("ListTasks").length;
    const agent = httpAgent(harness.service.url, { threadId, messages: [userMessage("slow")] });
    const running = runHttpAgent(agent, { runId: uniqueId("run"), forwardedProps });
    await waitFor(() => order.includes("out text") && held?.release !== undefined);
    held.release!("fail");
    const run = await running;
    held = undefined;

    await expectValidRun(run.events);
    expect(run.events.at(-1)).toMatchObject({ type: EventType.RUN_ERROR, code: "STATE_PERSISTENCE_FAILED" });
    // The task was never announced: no session event names it.
    expect(run.events.filter((event) => event.type === EventType.CUSTOM && event.name === SESSION)).toEqual([]);
    expect(order).not.toContain("out session");
    // Its id never reached the disk, but the run had it from the kernel: the task is cancelled by that id, not looked up.
    await waitFor(() => calls("CancelTask").length > cancelsBefore);
    expect(calls("CancelTask").at(-1)?.params).toEqual({ id: expect.any(String) });
    expect(calls("ListTasks")).toHaveLength(listsBefore);
    expect((await files.load(threadId))?.execution.taskId).toBeNull();
    // What the client was shown stays as it was shown; the run's error ends it.
    expect(transcript(run.messages)).toEqual([
      { role: "user", content: "slow" },
      { role: "assistant", content: "Hello" },
    ]);
  });
});
