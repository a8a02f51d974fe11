import { describe, expect, it } from "@jest/globals";
import { PassThrough } from "node:stream";
import { BYTES_PER_TURN, readBody } from "../../lib/a2a/body-reader.js";
import { FlowGate } from "../../lib/runs/flow-gate.js";

const text = (value: Uint8Array | undefined) => Buffer.from(value ?? []).toString("utf8");

describe("readBody", () => {
  it("hands over everything that arrived since the last read as one chunk, then the end", async () => {
    const body = new PassThrough();
    const reader = readBody(body, () => {}).getReader();
    body.write("data: a\n\n");
    body.write("data: b\n\n");
    await new Promise((resolve) => setImmediate(resolve));
    expect(text((await reader.read()).value)).toBe("data: a\n\ndata: b\n\n");
    const next = reader.read();
    body.end("data: c\n\n");
    expect(text((await next).value)).toBe("data: c\n\n");
    expect(await reader.read()).toEqual({ done: true, value: undefined });
  });

  it("ends after the chunks that came before a cut, and hands the cause over instead of failing the read", async () => {
    const body = new PassThrough();
    const cuts: unknown[] = [];
    const reader = readBody(body, (error) => cuts.push(error)).getReader();
    body.write("data: first\n\n");
    await new Promise((resolve) => setImmediate(resolve));
    const cause = new Error("Premature close");
    body.destroy(cause);
    await new Promise((resolve) => setImmediate(resolve));
    expect(text((await reader.read()).value)).toBe("data: first\n\n");
    expect(await reader.read()).toEqual({ done: true, value: undefined });
    expect(cuts).toEqual([cause]);
  });

  it("pauses the body while more than 1 MiB waits unread, and resumes it once reads bring that under", async () => {
    const body = new PassThrough({ highWaterMark: 64 * 1024 });
    const reader = readBody(body, () => {}).getReader();
    const chunk = Buffer.alloc(256 * 1024, "x");
    for (let i = 0; i < 5; i++) body.write(chunk);
    await new Promise((resolve) => setImmediate(resolve));
    expect(body.isPaused()).toBe(true);
    const { value } = await reader.read();
    expect(value!.length).toBe(BYTES_PER_TURN);
    expect(body.isPaused()).toBe(false);
  });

  it("hands over at most BYTES_PER_TURN in one turn of the event loop; a read past them waits for the next turn", async () => {
    const body = new PassThrough();
    const reader = readBody(body, () => {}).getReader();
    const sent = Buffer.from(Array.from({ length: BYTES_PER_TURN * 2 }, (_, i) => i % 251));
    // Chunks as a socket gives them: six fit in a turn, the seventh is cut to what is left.
    for (let at = 0; at < sent.length; at += 40 * 1024) body.write(sent.subarray(at, at + 40 * 1024));
    body.end();
    await new Promise((resolve) => setImmediate(resolve));

    const first = await reader.read();
    const second = await reader.read();
    expect([first.value!.length, second.value!.length]).toEqual([6 * 40 * 1024, BYTES_PER_TURN - 6 * 40 * 1024]);
    let answered = false;
    const third = reader.read().then((result) => ((answered = true), result));
    for (let i = 0; i < 10; i++) await Promise.resolve();
    expect(answered).toBe(false);
    await new Promise((resolve) => setImmediate(resolve));
    expect(answered).toBe(true);

    const chunks = [first.value!, second.value!, (await third).value!];
    for (let result = await reader.read(); !result.done; result = await reader.read()) chunks.push(result.value);
    expect(Buffer.concat(chunks).equals(sent)).toBe(true);
  });

  it("ends a pending read when the body is destroyed without an error, as a cut", async () => {
    const body = new PassThrough();
    const cuts: unknown[] = [];
    const reader = readBody(body, (error) => cuts.push(error)).getReader();
    const pending = reader.read();
    body.destroy();
    expect(await pending).toEqual({ done: true, value: undefined });
    expect(cuts).toHaveLength(1);
  });

  it("takes an error after the end for nothing: the body was whole", async () => {
    const body = new PassThrough();
    const cuts: unknown[] = [];
    const reader = readBody(body, (error) => cuts.push(error)).getReader();
    body.end("data: a\n\n");
    expect(text((await reader.read()).value)).toBe("data: a\n\n");
    expect(await reader.read()).toEqual({ done: true, value: undefined });
    body.destroy(new Error("late"));
    await new Promise((resolve) => setImmediate(resolve));
    expect(cuts).toEqual([]);
  });

  it("stops the body and ends a pending read when cancelled", async () => {
    const body = new PassThrough();
    const reader = readBody(body, () => {}).getReader();
    const pending = reader.read();
    await reader.cancel();
    expect(body.destroyed).toBe(true);
    expect(await pending).toEqual({ done: true, value: undefined });
  });

  it("with the gate closed, lets a read wait and pauses the body at the first chunk; the open gate hands it over", async () => {
    const body = new PassThrough();
    const gate = new FlowGate();
    const reader = readBody(body, () => {}, gate).getReader();
    gate.pause();
    let answered = false;
    const pending = reader.read().then((result) => ((answered = true), result));
    body.write("data: a\n\n");
    await new Promise((resolve) => setImmediate(resolve));
    expect(answered).toBe(false);
    expect(body.isPaused()).toBe(true);
    body.write("data: b\n\n");
    await new Promise((resolve) => setImmediate(resolve));
    expect(answered).toBe(false);

    gate.resume();
    expect(text((await pending).value)).toBe("data: a\n\n");
    expect(body.isPaused()).toBe(false);
    expect(text((await reader.read()).value)).toBe("data: b\n\n");
    body.end();
    expect(await reader.read()).toEqual({ done: true, value: undefined });
  });

  it("with the gate open, reads as without one", async () => {
    const body = new PassThrough();
    const reader = readBody(body, () => {}, new FlowGate()).getReader();
    body.write("data: a\n\n");
    await new Promise((resolve) => setImmediate(resolve));
    expect(body.isPaused()).toBe(false);
    expect(text((await reader.read()).value)).toBe("data: a\n\n");
  });

  it("ends a read that waits at the closed gate when cancelled", async () => {
    const body = new PassThrough();
    const gate = new FlowGate();
    const reader = readBody(body, () => {}, gate).getReader();
    gate.pause();
    const pending = reader.read();
    await reader.cancel();
    expect(await pending).toEqual({ done: true, value: undefined });
    expect(body.destroyed).toBe(true);
  });
});
