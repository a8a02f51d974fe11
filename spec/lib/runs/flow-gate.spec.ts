/**
 * The gate a stream's kernel reads go through (`lib/http/flow-gate.ts`):
 * closed while its client is behind or while the run waits on a write, and
 * `readThrough` reads every kernel stream of a run through it.
 */
import { describe, expect, it } from "@jest/globals";
import { EMPTY } from "rxjs";
import { FlowGate, readThrough } from "../../../lib/runs/flow-gate.js";
import type { RunA2A } from "../../../lib/a2a/client.js";

const settled = () => new Promise((resolve) => setImmediate(resolve));

describe("FlowGate", () => {
  it("is open with no promise to wait on, closed between pause() and resume(), and lets waiting reads go on when it opens", async () => {
    const gate = new FlowGate();
    expect(gate.whenOpen()).toBeUndefined();
    gate.pause();
    gate.pause();
    const opened = gate.whenOpen();
    expect(opened).toBeInstanceOf(Promise);
    let through = false;
    void opened!.then(() => (through = true));
    await settled();
    expect(through).toBe(false);
    gate.resume();
    await settled();
    expect(through).toBe(true);
    expect(gate.isOpen).toBe(true);
  });

  it("stays closed while a held write is pending, whatever the client does, and opens when the last one settles", async () => {
    const gate = new FlowGate();
    let finish!: () => void;
    let fail!: (error: Error) => void;
    const first = gate.hold(new Promise<void>((resolve) => (finish = resolve)));
    const second = gate.hold(new Promise<void>((_resolve, reject) => (fail = reject)));
    expect(gate.isOpen).toBe(false);
    gate.pause();
    gate.resume();
    expect(gate.isOpen).toBe(false);
    finish();
    await first;
    expect(gate.isOpen).toBe(false);
    fail(new Error("disk full"));
    await expect(second).rejects.toThrow("disk full");
    await settled();
    expect(gate.isOpen).toBe(true);
  });
});

describe("readThrough", () => {
  it("opens every kernel stream with the gate, and passes the other calls on as they are", async () => {
    const gate = new FlowGate();
    const calls: unknown[][] = [];
    const record =
      (name: string, answer: unknown) =>
      (...args: unknown[]) => {
        calls.push([name, ...args]);
        return answer;
      };
    const a2a = {
      sendStreamingMessage: record("sendStreamingMessage", EMPTY),
      subscribeToTask: record("subscribeToTask", EMPTY),
      sendMessage: record("sendMessage", Promise.resolve({})),
      getTask: record("getTask", Promise.resolve({})),
      cancelTask: record("cancelTask", Promise.resolve({})),
      getPipelineState: record("getPipelineState", Promise.resolve(undefined)),
      listTasks: record("listTasks", Promise.resolve({})),
    } as unknown as RunA2A;
    const gated = readThrough(gate, a2a);
    gated.sendStreamingMessage({ message: 1 });
    gated.subscribeToTask("t-1");
    await gated.sendMessage({ message: 2 });
    await gated.getTask("t-1", 5);
    await gated.cancelTask("t-1");
    await gated.getPipelineState("t-1", 3);
    await gated.listTasks("c-1", 7);
    expect(calls).toEqual([
      ["sendStreamingMessage", { message: 1 }, { gate }],
      ["subscribeToTask", "t-1", { gate }],
      ["sendMessage", { message: 2 }],
      ["getTask", "t-1", 5],
      ["cancelTask", "t-1"],
      ["getPipelineState", "t-1", 3],
      ["listTasks", "c-1", 7],
    ]);
  });
});
