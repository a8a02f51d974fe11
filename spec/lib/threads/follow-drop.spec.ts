/**
 * `followDropOnce` on its own, with a stand-in for the A2A client's two
 * calls: which ends of a run's stream are drops, that the follow is made
 * once, and that the snapshots it reads add no text. The HTTP specs
 * (`http-follow-drop`, `http-a2a-v03`) drive it against real kernels.
 */
import { describe, expect, it } from "@jest/globals";
import { concat, lastValueFrom, materialize, Observable, of, throwError, toArray } from "rxjs";
import { AguiError } from "../../../lib/errors.js";
import { unavailable, executionFailed } from "../../../lib/a2a/rpc-errors.js";
import type { KernelSignal } from "../../../lib/model/kernel-signal.js";
import { followDropOnce, isBrokenStream } from "../../../lib/threads/follow-drop.js";

const TASK = "task-1";
const message = (text: string) => ({ messageId: "m-1", role: "ROLE_AGENT", parts: [{ text }] });
const taskSnapshot = (state: string, text: string) => ({
  id: TASK,
  contextId: "ctx-1",
  status: { state, message: message(text) },
});
const statusUpdate = (state: string, text?: string) => ({
  statusUpdate: { taskId: TASK, contextId: "ctx-1", status: { state, ...(text === undefined ? {} : { message: message(text) }) } },
});

/** The A2A client's GetTask and SubscribeToTask, recording what was asked. */
function kernel(live: Array<Record<string, unknown>>, options: { subscribe?: Observable<Record<string, unknown>> } = {}) {
  const asked: string[] = [];
  return {
    asked,
    a2a: {
      getTask: (taskId: string) => {
        asked.push(`GetTask ${taskId}`);
        return Promise.resolve(taskSnapshot("TASK_STATE_WORKING", "Text the client already has"));
      },
      subscribeToTask: (taskId: string) => {
        asked.push(`SubscribeToTask ${taskId}`);
        return options.subscribe ?? of({ task: taskSnapshot("TASK_STATE_WORKING", "Text the client already has") }, ...live);
      },
    },
  };
}

const bound: KernelSignal = { kind: "task-bound", taskId: TASK, contextId: "ctx-1" };
const shown: KernelSignal = { kind: "text", messageId: "m-1", text: "Text the client already has", source: "delta" };
const run = (source: Observable<KernelSignal>, a2a: ReturnType<typeof kernel>["a2a"], known: string | null = null) =>
  lastValueFrom(
    source.pipe(
      followDropOnce(a2a, () => known),
      materialize(),
      toArray(),
    ),
  );
const textsOf = (notifications: Awaited<ReturnType<typeof run>>) =>
  notifications.flatMap((notification) =>
    notification.kind === "N" && notification.value!.kind === "text" ? [notification.value!.text] : [],
  );

describe("followDropOnce", () => {
  it("follows a stream that ends before a boundary: GetTask, then SubscribeToTask, with no snapshot text", async () => {
    const { a2a, asked } = kernel([statusUpdate("TASK_STATE_WORKING", "and the rest."), statusUpdate("TASK_STATE_COMPLETED")]);
    const notifications = await run(of(bound, shown), a2a);

    expect(asked).toEqual([`GetTask ${TASK}`, `SubscribeToTask ${TASK}`]);
    expect(textsOf(notifications)).toEqual(["Text the client already has", "and the rest."]);
    expect(notifications.at(-1)!.kind).toBe("C");
  });

  it("follows a broken connection the same way", async () => {
    const { a2a, asked } = kernel([statusUpdate("TASK_STATE_COMPLETED")]);
    const notifications = await run(
      concat(
        of(bound),
        throwError(() => unavailable(new Error("socket hang up"))),
      ),
      a2a,
    );

    expect(asked).toEqual([`GetTask ${TASK}`, `SubscribeToTask ${TASK}`]);
    expect(notifications.at(-1)!.kind).toBe("C");
  });

  it("follows the task the thread knew when the stream dropped before naming it", async () => {
    const { a2a, asked } = kernel([]);
    await run(of(), a2a, "task-known");
    expect(asked).toEqual(["GetTask task-known", "SubscribeToTask task-known"]);
  });

  it("leaves a kernel's own error (JSON-RPC) as it is: that is no drop", async () => {
    const { a2a, asked } = kernel([]);
    const failure = executionFailed({ code: -32603, message: "boom" });
    const notifications = await run(
      concat(
        of(bound),
        throwError(() => failure),
      ),
      a2a,
    );

    expect(asked).toEqual([]);
    expect(notifications.at(-1)).toMatchObject({ kind: "E", error: failure });
  });

  it("passes the end on when there is no task to follow", async () => {
    const { a2a, asked } = kernel([]);
    const notifications = await run(of(shown), a2a);
    expect(asked).toEqual([]);
    expect(notifications.at(-1)!.kind).toBe("C");
  });

  it("follows once: a follow that breaks too ends the stream with its error", async () => {
    const broken = unavailable(new Error("socket hang up"));
    const { a2a, asked } = kernel([], { subscribe: throwError(() => broken) });
    const notifications = await run(of(bound), a2a);

    expect(asked).toEqual([`GetTask ${TASK}`, `SubscribeToTask ${TASK}`]);
    expect(notifications.at(-1)).toMatchObject({ kind: "E", error: broken });
  });

  it("tells a broken stream from other failures", () => {
    expect(isBrokenStream(unavailable(new Error("reset")))).toBe(true);
    expect(isBrokenStream(new AguiError("A2A_PROTOCOL_ERROR"))).toBe(false);
    expect(isBrokenStream(executionFailed({ code: -32001, message: "task not found" }))).toBe(false);
    expect(isBrokenStream(new Error("a bug"))).toBe(false);
  });
});
