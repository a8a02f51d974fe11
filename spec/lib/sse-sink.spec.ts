import { EventType, type AGUIEvent } from "@ag-ui/core";
import { describe, expect, it } from "@jest/globals";
import { Observable, Subject, finalize } from "rxjs";
import { pipeToSse, type SseResponse } from "../../lib/http/sse-sink.js";
import { HEARTBEAT } from "../../operators/merge-heartbeat.js";
import type { SseItem } from "../../lib/run.js";

/**
 * A response whose client reads only when told: every write stays in
 * `writableLength` until `read()` takes it, as Node's buffer behaves when
 * the socket is full.
 */
class FakeResponse {
  written: string[] = [];
  writableLength = 0;
  maxBacklog = 0;
  ended = false;
  destroyed = false;
  #onClose: Array<() => void> = [];

  writeHead() {
    return this;
  }
  flushHeaders() {}
  write(chunk: string) {
    this.written.push(chunk);
    this.writableLength += Buffer.byteLength(chunk);
    this.maxBacklog = Math.max(this.maxBacklog, this.writableLength);
    return this.writableLength === 0;
  }
  read() {
    this.writableLength = 0;
  }
  end() {
    this.ended = true;
    return this;
  }
  destroy() {
    this.destroyed = true;
    queueMicrotask(() => this.#onClose.forEach((handler) => handler()));
    return this;
  }
  on(event: string, handler: () => void) {
    if (event === "close") this.#onClose.push(handler);
    return this;
  }
  asResponse() {
    return this as unknown as SseResponse;
  }
}

const content = (delta: string): AGUIEvent => ({ type: EventType.TEXT_MESSAGE_CONTENT, messageId: "m", delta });
const record = (event: AGUIEvent) => `data: ${JSON.stringify(event)}\n\n`;
const nextTick = () => new Promise((resolve) => process.nextTick(resolve));

describe("pipeToSse", () => {
  it("writes events as `data:` records and heartbeats as comments, LF-only, and ends with the run", () => {
    const res = new FakeResponse();
    const items = new Subject<SseItem>();
    pipeToSse(items, res.asResponse(), () => {});
    items.next(content("hi"));
    items.next(HEARTBEAT);
    items.complete();
    expect(res.written.join("")).toBe(`data: ${JSON.stringify(content("hi"))}\n\n: heartbeat\n\n`);
    expect(res.ended).toBe(true);
  });

  it("writes the events of one tick as one chunk on the next, and the next tick's as the next", async () => {
    const res = new FakeResponse();
    const items = new Subject<SseItem>();
    pipeToSse(items, res.asResponse(), () => {});
    items.next(content("a"));
    items.next(content("b"));
    expect(res.written).toEqual([]);
    await nextTick();
    items.next(content("c"));
    items.complete();
    expect(res.written).toEqual([record(content("a")) + record(content("b")), record(content("c"))]);
  });

  it("drops a client that stops reading once its backlog passes the limit, and leaves the run as a disconnect does", async () => {
    const res = new FakeResponse();
    const items = new Subject<SseItem>();
    let runLeft = false;
    const reasons: number[] = [];
    pipeToSse(items.pipe(finalize(() => (runLeft = true))), res.asResponse(), () => {}, {
      maxBacklogBytes: 64 * 1024,
      onSlowClient: (backlog) => reasons.push(backlog),
    });
    const event = content("x".repeat(1000));
    // One event a tick, as a kernel that streams steadily sends them.
    for (let i = 0; i < 10_000 && items.observed; i++) {
      items.next(event);
      await nextTick();
    }

    expect(runLeft).toBe(true);
    expect(items.observed).toBe(false);
    expect(res.destroyed).toBe(true);
    expect(res.ended).toBe(false);
    // Bounded: the limit, plus the one record that crossed it.
    expect(res.maxBacklog).toBeLessThanOrEqual(64 * 1024 + record(event).length);
    expect(res.written.length).toBe(Math.floor((64 * 1024) / record(event).length) + 1);
    expect(reasons).toEqual([res.maxBacklog]);
  });

  it("writes a burst of one tick in 64 KiB pieces, so a burst too is dropped past the limit and stays bounded", () => {
    const res = new FakeResponse();
    const items = new Subject<SseItem>();
    pipeToSse(items, res.asResponse(), () => {}, { maxBacklogBytes: 64 * 1024 });
    const event = content("x".repeat(1000));
    for (let i = 0; i < 10_000 && items.observed; i++) items.next(event);
    expect(res.destroyed).toBe(true);
    expect(items.observed).toBe(false);
    expect(res.written.every((chunk) => Buffer.byteLength(chunk) <= 64 * 1024 + Buffer.byteLength(record(event)))).toBe(true);
    // Bounded: the limit, plus one tick's piece (64 KiB), plus one record.
    expect(res.maxBacklog).toBeLessThanOrEqual(64 * 1024 + 64 * 1024 + record(event).length);
  });

  it("counts a piece in bytes: text of three-byte characters goes out in pieces of at most 64 KiB too", () => {
    const res = new FakeResponse();
    const items = new Subject<SseItem>();
    pipeToSse(items, res.asResponse(), () => {});
    const event = content("云".repeat(1000));
    for (let i = 0; i < 500; i++) {
      items.next(event);
      res.read();
    }
    items.complete();
    expect(res.written.length).toBeGreaterThan(1);
    expect(res.written.every((chunk) => Buffer.byteLength(chunk) <= 64 * 1024 + Buffer.byteLength(record(event)))).toBe(true);
    expect(res.written.join("")).toBe(record(event).repeat(500));
  });

  it("keeps a client that reads, however much goes through in one tick", () => {
    const res = new FakeResponse();
    const items = new Subject<SseItem>();
    pipeToSse(items, res.asResponse(), () => {}, { maxBacklogBytes: 64 * 1024 });
    const event = content("x".repeat(1000));
    for (let i = 0; i < 10_000; i++) {
      items.next(event);
      res.read();
    }
    items.complete();
    expect(res.written.join("")).toBe(record(event).repeat(10_000));
    expect(res.destroyed).toBe(false);
    expect(res.ended).toBe(true);
  });

  it("judges the backlog before a write, so one event larger than the limit still reaches a reading client", async () => {
    const res = new FakeResponse();
    const items = new Subject<SseItem>();
    pipeToSse(items, res.asResponse(), () => {}, { maxBacklogBytes: 1024 });
    items.next(content("x".repeat(10_000)));
    await nextTick();
    expect(res.writableLength).toBeGreaterThan(1024);
    res.read();
    items.next(content("y"));
    items.complete();
    expect(res.written.join("")).toBe(record(content("x".repeat(10_000))) + record(content("y")));
    expect(res.destroyed).toBe(false);
  });

  it("drops a client that falls behind during the run's synchronous start", () => {
    const res = new FakeResponse();
    let runLeft = false;
    let emitted = 0;
    // A run that emits while it is being subscribed, before the sink holds its subscription.
    const eager = new Observable<SseItem>((subscriber) => {
      // More than one 64 KiB piece, so part of it is written while the run is still being subscribed.
      for (let i = 0; i < 100 && !subscriber.closed; i++, emitted++) subscriber.next(content("x".repeat(1000)));
      return () => (runLeft = true);
    });
    pipeToSse(eager, res.asResponse(), () => {}, { maxBacklogBytes: 1024 });
    expect(res.destroyed).toBe(true);
    expect(runLeft).toBe(true);
    expect(res.written.length).toBeLessThan(emitted);
  });
});
