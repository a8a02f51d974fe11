import { describe, expect, it } from "@jest/globals";
import { Subject } from "rxjs";
import { AguiError } from "../../lib/errors.js";
import type { KernelSignal } from "../../lib/model/kernel-signal.js";
import { persistIdsAside } from "../../operators/persist-ids-aside.js";
import { marbles } from "../support/marbles.js";

const task: KernelSignal = { kind: "task-bound", taskId: "t1", contextId: "c1" };
const session: KernelSignal = { kind: "session-bound", sessionId: "s1" };
const text: KernelSignal = { kind: "text", messageId: "m1", text: "Hello", source: "delta" };
const more: KernelSignal = { kind: "text", messageId: "m1", text: " there", source: "delta" };
const end: KernelSignal = { kind: "run-end", error: undefined, kernelSettled: true };

/** A write the test commits or fails by hand. */
function heldWrite() {
  let commit!: () => void;
  let fail!: (error: unknown) => void;
  const written = new Promise<void>((resolve, reject) => {
    commit = resolve;
    fail = reject;
  });
  return { written, commit, fail };
}

/** Everything the operator emits, and how it ended, for a source the test drives. */
function observe(persist: (signal: KernelSignal) => Promise<void> | undefined) {
  const source = new Subject<KernelSignal>();
  const seen: KernelSignal[] = [];
  const outcome = { ended: "" };
  let unsubscribedSource = false;
  const subscription = source.pipe(persistIdsAside(persist)).subscribe({
    next: (signal) => seen.push(signal),
    error: (error: Error) => (outcome.ended = `error ${error.message}`),
    complete: () => (outcome.ended = "complete"),
  });
  subscription.add(() => (unsubscribedSource = !source.observed));
  return { source, seen, outcome, subscription, sourceLeft: () => unsubscribedSource || !source.observed };
}

const settle = async () => {
  for (let turn = 0; turn < 5; turn++) await Promise.resolve();
};

describe("persistIdsAside", () => {
  it("passes everything at once, in the same frame, when there is nothing to write", () => {
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("abx-e|", { a: task, b: session, x: text, e: end }).pipe(persistIdsAside(() => undefined))).toBe("abx-e|", {
        a: task,
        b: session,
        x: text,
        e: end,
      });
    });
  });

  it("lets what follows an id go on while its write is under way, and tells the id again once it is on disk", async () => {
    const write = heldWrite();
    const { source, seen } = observe((signal) => (signal === task ? write.written : undefined));
    source.next(task);
    source.next(text);
    source.next(more);
    expect(seen).toEqual([{ ...task, storing: true }, text, more]);
    write.commit();
    await settle();
    expect(seen).toEqual([{ ...task, storing: true }, text, more, task]);
  });

  it("holds the run's end, and the source's, until every write has committed, and tells the ids in the order they were written", async () => {
    const taskWrite = heldWrite();
    const sessionWrite = heldWrite();
    const { source, seen, outcome } = observe((signal) =>
      signal === task ? taskWrite.written : signal === session ? sessionWrite.written : undefined,
    );
    source.next(task);
    source.next(session);
    source.next(text);
    source.next(end);
    source.complete();
    expect(seen).toEqual([{ ...task, storing: true }, { ...session, storing: true }, text]);
    // The session's write commits first; it is told after the task's all the same.
    sessionWrite.commit();
    await settle();
    expect(seen).toHaveLength(3);
    taskWrite.commit();
    await settle();
    expect(seen).toEqual([{ ...task, storing: true }, { ...session, storing: true }, text, task, session, end]);
    expect(outcome.ended).toBe("complete");
  });

  it("ends the run where a write failed, with STATE_PERSISTENCE_FAILED, and reads no further", async () => {
    const write = heldWrite();
    const { source, seen, outcome, sourceLeft } = observe((signal) => (signal === task ? write.written : undefined));
    source.next(task);
    source.next(text);
    write.fail(new Error("disk full"));
    await settle();
    source.next(more);
    source.next(end);
    expect(seen).toEqual([
      { ...task, storing: true },
      text,
      { kind: "run-end", error: expect.objectContaining({ code: "STATE_PERSISTENCE_FAILED" }), kernelSettled: false },
    ]);
    expect(outcome.ended).toBe("complete");
    expect(sourceLeft()).toBe(true);
  });

  it("keeps the error a write failed with when it has a code of its own", async () => {
    const { source, seen } = observe(() => Promise.reject(new AguiError("STATE_UNAVAILABLE")));
    source.next(task);
    await settle();
    expect(seen.at(-1)).toMatchObject({ kind: "run-end", error: { code: "STATE_UNAVAILABLE" }, kernelSettled: false });
  });

  it("ends the run at once, before anything after it, for an id refused on the spot", () => {
    const { source, seen, outcome } = observe(() => {
      throw new AguiError("A2A_PROTOCOL_ERROR", { reason: "taskChanged" });
    });
    source.next(task);
    source.next(text);
    expect(seen).toEqual([{ kind: "run-end", error: expect.objectContaining({ code: "A2A_PROTOCOL_ERROR" }), kernelSettled: false }]);
    expect(outcome.ended).toBe("complete");
  });

  it("tells nothing more once the subscriber left while a write was under way", async () => {
    const write = heldWrite();
    const { source, seen, subscription } = observe((signal) => (signal === task ? write.written : undefined));
    source.next(task);
    subscription.unsubscribe();
    write.commit();
    await settle();
    expect(seen).toEqual([{ ...task, storing: true }]);
  });
});
