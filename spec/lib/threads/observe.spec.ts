/**
 * An observer's stream opens with the thread's status even when the hub
 * answers later than the kernel, as a hub shared over Redis does: nothing
 * else (the conversation, the live run) goes out before the status snapshot.
 */
import { describe, expect, it } from "@jest/globals";
import { EventType, type AGUIEvent } from "@ag-ui/core";
import { concat, from, lastValueFrom, NEVER, toArray, type Observable } from "rxjs";
import { HEARTBEAT } from "../../../operators/merge-heartbeat.js";
import { initialThreadStatus, type ThreadStatus } from "../../../lib/model/thread-status.js";
import type { RunA2A } from "../../../lib/a2a/client.js";
import { observeExecution } from "../../../lib/threads/observe.js";
import type { ThreadStatusHub } from "../../../lib/threads/status-hub.js";
import { newThreadState } from "../../../lib/threads/thread-transitions.js";
import { expectValidRun } from "../../support/agui.js";

/** A hub whose first status comes a turn of the event loop after the watcher asked, as Redis answers. */
const lateHub: ThreadStatusHub = {
  record: () => undefined,
  watch: (threadId): Observable<ThreadStatus> =>
    concat(
      from(new Promise<ThreadStatus>((resolve) => setImmediate(() => resolve({ ...initialThreadStatus(threadId), runId: "run-1" })))),
      NEVER,
    ),
};

describe("observeExecution", () => {
  it("shows the status snapshot before the conversation and the run's end, however late the hub answers", async () => {
    // An execution with no task: its stream is the conversation, then its end.
    const state = newThreadState({
      threadId: "t1",
      contextId: "ctx-1",
      cwd: "/tmp",
      userId: null,
      executionId: "e1",
      rosInvocationId: "ros",
    });
    const a2a = { listTasks: () => Promise.resolve({ tasks: [] }) } as unknown as RunA2A;

    const items = await lastValueFrom(
      observeExecution({ state, runId: "observe-1", afterSequence: 0, language: "en" }, { a2a, hub: lateHub, heartbeatMs: 60_000 }).pipe(
        toArray(),
      ),
    );
    const events = items.filter((item): item is AGUIEvent => item !== HEARTBEAT);
    await expectValidRun(events);
    expect(events.map((event) => event.type)).toEqual([
      EventType.RUN_STARTED,
      EventType.CUSTOM,
      EventType.STATE_SNAPSHOT,
      EventType.MESSAGES_SNAPSHOT,
      EventType.RUN_FINISHED,
    ]);
    expect(events[2]).toMatchObject({ snapshot: { threadId: "t1", runId: "run-1" } });
  });
});
