import { EventType, type AGUIEvent } from "@ag-ui/core";
import { afterEach, describe, expect, it, jest } from "@jest/globals";
import { Observable, Subject, finalize } from "rxjs";
import { PROTOBUF_ENCODING, PROTOBUF_MEDIA_TYPE, SSE_ENCODING } from "../../lib/http/event-encoding.js";
import { FlowGate } from "../../lib/runs/flow-gate.js";
import { pipeToSse, type SseResponse } from "../../lib/http/sse-sink.js";
import { HEARTBEAT } from "../../operators/merge-heartbeat.js";
import type { SseItem } from "../../lib/run-pipeline.js";
import { expectValidRun } from "../support/agui.js";
import { decodeEvents } from "../support/event-streams.js";

/**
 * A response whose client reads only when told: every write stays in
 * `writableLength` until `take()` or `read()` takes it, and a write that
 * leaves bytes behind asks for `drain`, which comes once all are taken, as
 * Node's buffer behaves when the socket is full.
 */
class FakeResponse {
  constructor() {
    made.push(this);
  }
  written: Array<string | Uint8Array> = [];
  headers: Record<string, string> = {};
  writableLength = 0;
  maxUnsent = 0;
  ended = false;
  destroyed = false;
  #needDrain = false;
  #handlers: Record<string, Array<() => void>> = {};

  writeHead(_status: number, headers: Record<string, string>) {
    this.headers = headers;
    return this;
  }
  vary() {
    return this;
  }
  getHeaderNames(): string[] {
    return [];
  }
  headersFlushed = 0;
  flushHeaders() {
    this.headersFlushed++;
  }
  write(chunk: string | Uint8Array) {
    this.written.push(chunk);
    this.writableLength += Buffer.byteLength(chunk);
    this.maxUnsent = Math.max(this.maxUnsent, this.writableLength);
    this.#needDrain ||= this.writableLength > 0;
    return this.writableLength === 0;
  }
  /** The client takes `bytes` of what waits. */
  take(bytes: number) {
    this.writableLength = Math.max(0, this.writableLength - bytes);
    if (this.writableLength === 0 && this.#needDrain) {
      this.#needDrain = false;
      this.#emit("drain");
    }
  }
  read() {
    this.take(this.writableLength);
  }
  get writableEnded() {
    return this.ended;
  }
  end() {
    this.ended = true;
    return this;
  }
  destroy() {
    this.destroyed = true;
    queueMicrotask(() => this.#emit("close"));
    return this;
  }
  on(event: string, handler: () => void) {
    (this.#handlers[event] ??= []).push(handler);
    return this;
  }
  #emit(event: string) {
    for (const handler of this.#handlers[event] ?? []) handler();
  }
  asResponse() {
    return this as unknown as SseResponse;
  }
}

const content = (delta: string): AGUIEvent => ({ type: EventType.TEXT_MESSAGE_CONTENT, messageId: "m", delta });
const record = (event: AGUIEvent) => `data: ${JSON.stringify(event)}\n\n`;
const nextTick = () => new Promise((resolve) => process.nextTick(resolve));
const KIB = 1024;

/** The stall watch's timers and clock are faked; the sink's per-tick flush (nextTick) is not. */
const fakeTimers = () => jest.useFakeTimers({ doNotFake: ["nextTick", "queueMicrotask", "setImmediate", "clearImmediate"] });

/** Every response a test made: a stream whose client left bytes unread is watched until it leaves (by design). */
const made: FakeResponse[] = [];

afterEach(async () => {
  // Each test's clients leave with it, or their streams' stall watches would outlive this file on real timers.
  for (const res of made.splice(0)) if (!res.destroyed) res.destroy();
  await nextTick();
  jest.useRealTimers();
});

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

  it("sends its headers in the write of the records it has at once (a run's RUN_STARTED), else alone on the next tick", async () => {
    const opened = new FakeResponse();
    pipeToSse(new Observable<SseItem>((subscriber) => subscriber.next(content("a"))), opened.asResponse(), () => {});
    await nextTick();
    expect(opened.written).toEqual([record(content("a"))]);
    expect(opened.headersFlushed).toBe(0);

    const quiet = new FakeResponse();
    const later = new Subject<SseItem>();
    pipeToSse(later, quiet.asResponse(), () => {});
    expect(quiet.headersFlushed).toBe(0);
    await nextTick();
    expect(quiet.headersFlushed).toBe(1);
    expect(quiet.written).toEqual([]);
    later.next(content("b"));
    later.complete();
    expect(quiet.written).toEqual([record(content("b"))]);

    const empty = new FakeResponse();
    pipeToSse(new Observable<SseItem>((subscriber) => subscriber.complete()), empty.asResponse(), () => {});
    await nextTick();
    expect(empty.ended).toBe(true);
    expect(empty.headersFlushed).toBe(0);
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
    expect(res.written.every((chunk) => Buffer.byteLength(chunk) <= 64 * KIB + Buffer.byteLength(record(event)))).toBe(true);
    expect(res.written.join("")).toBe(record(event).repeat(500));
  });
});

describe("pipeToSse backpressure", () => {
  it("closes the gate once the unsent bytes pass the high-water mark, keeps the client, and opens the gate on drain", () => {
    const res = new FakeResponse();
    const items = new Subject<SseItem>();
    const gate = new FlowGate();
    const pressure: Array<[number, boolean]> = [];
    pipeToSse(items, res.asResponse(), () => {}, {
      highWaterMark: 64 * KIB,
      gate,
      onPressure: (unsent, reading) => pressure.push([unsent, reading]),
    });
    const event = content("x".repeat(1000));
    // A burst of one tick, as one kernel chunk gives: written in 64 KiB pieces as it comes.
    for (let i = 0; i < 200; i++) items.next(event);

    expect(gate.isOpen).toBe(false);
    expect(res.destroyed).toBe(false);
    expect(items.observed).toBe(true);
    // Closed from the first write past the mark on, and open before it.
    const firstClosed = pressure.findIndex(([, reading]) => !reading);
    expect(pressure[firstClosed]![0]).toBeGreaterThan(64 * KIB);
    expect(pressure.slice(0, firstClosed).every(([unsent]) => unsent <= 64 * KIB)).toBe(true);

    res.read();
    expect(gate.isOpen).toBe(true);
    expect(pressure.at(-1)).toEqual([0, true]);
    items.complete();
    expect(res.written.join("")).toBe(record(event).repeat(200));
  });

  it("never closes the gate for a client that keeps up, however much goes through in one tick", () => {
    const res = new FakeResponse();
    const items = new Subject<SseItem>();
    const readingStates = new Set<boolean>();
    pipeToSse(items, res.asResponse(), () => {}, {
      highWaterMark: 64 * KIB,
      onPressure: (_unsent, reading) => readingStates.add(reading),
    });
    const event = content("x".repeat(1000));
    for (let i = 0; i < 10_000; i++) {
      items.next(event);
      res.read();
    }
    items.complete();
    expect(res.written.join("")).toBe(record(event).repeat(10_000));
    expect([...readingStates]).toEqual([true]);
    expect(res.destroyed).toBe(false);
    expect(res.ended).toBe(true);
  });

  it("delivers one event larger than the mark whole, to a client that reads it", async () => {
    const res = new FakeResponse();
    const items = new Subject<SseItem>();
    const gate = new FlowGate();
    pipeToSse(items, res.asResponse(), () => {}, { highWaterMark: 1024, gate });
    items.next(content("x".repeat(10_000)));
    await nextTick();
    expect(res.writableLength).toBeGreaterThan(1024);
    expect(gate.isOpen).toBe(false);
    res.read();
    expect(gate.isOpen).toBe(true);
    items.next(content("y"));
    items.complete();
    expect(res.written.join("")).toBe(record(content("x".repeat(10_000))) + record(content("y")));
    expect(res.destroyed).toBe(false);
  });

  it("writes a record holding a megabyte string a slice at a time, the loop let go between, the same bytes in order", async () => {
    const res = new FakeResponse();
    const items = new Subject<SseItem>();
    const gate = new FlowGate();
    pipeToSse(items, res.asResponse(), () => {}, { gate });
    // Escapes and a surrogate pair across the slices: the pieces must join to exactly what JSON.stringify makes.
    const big = content(`"quoted"\n${"é😀".repeat(700_000)}`);
    const result: AGUIEvent = { type: EventType.TOOL_CALL_RESULT, messageId: "r", toolCallId: "t", content: "z".repeat(1_200_000) };
    let turnsDuringTheWrite = 0;
    const countTurns = () => {
      if (res.ended) return;
      turnsDuringTheWrite++;
      setImmediate(countTurns);
    };
    items.next(content("before"));
    items.next(big);
    items.next(content("after"));
    items.next(result);
    items.complete();
    setImmediate(countTurns);
    // Nothing after the large record overtakes it, and the kernel's reads wait while it is written.
    expect(gate.isOpen).toBe(false);
    expect(res.ended).toBe(false);
    while (!res.ended) await new Promise((resolve) => setImmediate(resolve));
    expect(res.written.join("")).toBe(record(content("before")) + record(big) + record(content("after")) + record(result));
    expect(res.written.length).toBeGreaterThan(6);
    expect(turnsDuringTheWrite).toBeGreaterThan(2);
  });

  it("opens the gate when its client leaves, so that no kernel read waits on it forever", async () => {
    const res = new FakeResponse();
    const items = new Subject<SseItem>();
    const gate = new FlowGate();
    pipeToSse(items, res.asResponse(), () => {}, { highWaterMark: 1024, gate });
    items.next(content("x".repeat(10_000)));
    await nextTick();
    expect(gate.isOpen).toBe(false);
    res.destroy();
    await nextTick();
    expect(gate.isOpen).toBe(true);
    expect(items.observed).toBe(false);
  });
});

describe("pipeToSse and a client that takes nothing", () => {
  const STALL_MS = 10_000;

  const stalledRun = () => {
    fakeTimers();
    const res = new FakeResponse();
    const items = new Subject<SseItem>();
    const run = { left: false, dropped: [] as number[] };
    pipeToSse(items.pipe(finalize(() => (run.left = true))), res.asResponse(), () => {}, {
      stallMs: STALL_MS,
      onSlowClient: (unsent) => run.dropped.push(unsent),
    });
    return { res, items, run };
  };

  it("is dropped once it has taken nothing for the stall time: the run is left as on a disconnect", async () => {
    const { res, items, run } = stalledRun();
    items.next(content("x".repeat(1000)));
    await nextTick();
    const unsent = res.writableLength;

    jest.advanceTimersByTime(STALL_MS - 1);
    expect(run.left).toBe(false);
    expect(res.destroyed).toBe(false);
    jest.advanceTimersByTime(1);
    expect(run.left).toBe(true);
    expect(items.observed).toBe(false);
    expect(res.destroyed).toBe(true);
    expect(res.ended).toBe(false);
    expect(run.dropped).toEqual([unsent]);
    expect(jest.getTimerCount()).toBe(0);
  });

  it("is not kept by the heartbeats written to it meanwhile: they are bytes it did not take either", async () => {
    const { res, items, run } = stalledRun();
    items.next(content("x".repeat(1000)));
    await nextTick();
    for (let second = 1; second < STALL_MS / 1000; second++) {
      jest.advanceTimersByTime(1000);
      items.next(HEARTBEAT);
      await nextTick();
    }
    jest.advanceTimersByTime(1000);
    expect(run.left).toBe(true);
    expect(res.destroyed).toBe(true);
  });

  it("is kept as long as it takes a few bytes now and then, and dropped once it stops", async () => {
    const { res, items, run } = stalledRun();
    items.next(content("x".repeat(100_000)));
    await nextTick();
    // Ten minutes, ten bytes every nine seconds.
    for (let i = 0; i < 66; i++) {
      jest.advanceTimersByTime(9_000);
      res.take(10);
    }
    expect(run.left).toBe(false);
    expect(res.destroyed).toBe(false);
    jest.advanceTimersByTime(STALL_MS + 1000);
    expect(run.left).toBe(true);
    expect(res.destroyed).toBe(true);
  });

  it("is not watched while nothing waits for it: a client that keeps up leaves no timer behind", async () => {
    const { res, items } = stalledRun();
    for (let i = 0; i < 10; i++) {
      items.next(content("x".repeat(1000)));
      await nextTick();
      res.read();
      jest.advanceTimersByTime(1000);
    }
    expect(jest.getTimerCount()).toBe(0);
    items.complete();
    expect(res.ended).toBe(true);
  });

  it("is watched after the run's end too: the bytes it leaves unread are let go", async () => {
    const { res, items, run } = stalledRun();
    items.next(content("x".repeat(1000)));
    items.complete();
    expect(res.ended).toBe(true);
    jest.advanceTimersByTime(STALL_MS);
    expect(res.destroyed).toBe(true);
    expect(run.dropped).toHaveLength(1);
  });
});

describe("pipeToSse and a client that left before it started", () => {
  it("starts the run and leaves it at once, as on a disconnect, and writes nothing", () => {
    const res = new FakeResponse();
    res.destroyed = true;
    let subscribed = false;
    let left = false;
    const run = new Observable<SseItem>((subscriber) => {
      subscribed = true;
      subscriber.next(content("early"));
      return () => (left = true);
    });
    pipeToSse(run, res.asResponse(), () => {});
    expect(subscribed).toBe(true);
    expect(left).toBe(true);
    expect(res.written).toEqual([]);
  });
});

describe("pipeToSse in protobuf (a client whose Accept asked for it)", () => {
  const started: AGUIEvent = { type: EventType.RUN_STARTED, threadId: "t", runId: "r" };
  const finished: AGUIEvent = { type: EventType.RUN_FINISHED, threadId: "t", runId: "r" };
  const bytesOf = (res: FakeResponse) =>
    Buffer.concat(res.written.map((chunk) => (typeof chunk === "string" ? Buffer.from(chunk) : chunk)));
  /** The frames' lengths, read from their 4-byte big-endian prefixes; throws where the bytes are not whole frames. */
  const frameLengths = (bytes: Buffer) => {
    const lengths: number[] = [];
    for (let offset = 0; offset < bytes.length; offset += 4 + lengths.at(-1)!) {
      if (offset + 4 > bytes.length) throw new Error(`a partial frame at ${offset}`);
      lengths.push(bytes.readUInt32BE(offset));
    }
    return lengths;
  };

  it("writes each event as one length-prefixed frame, under exactly the protobuf type, and a heartbeat as nothing at all", async () => {
    const res = new FakeResponse();
    const items = new Subject<SseItem>();
    pipeToSse(items, res.asResponse(), () => {}, { encoding: PROTOBUF_ENCODING });
    const run: AGUIEvent[] = [
      started,
      { type: EventType.TEXT_MESSAGE_START, messageId: "m", role: "assistant" },
      content("hi"),
      content("云"),
      { type: EventType.TEXT_MESSAGE_END, messageId: "m" },
      finished,
    ];
    items.next(HEARTBEAT);
    run.slice(0, 3).forEach((event) => items.next(event));
    await nextTick();
    items.next(HEARTBEAT);
    items.next(run[3]!);
    items.next(HEARTBEAT);
    run.slice(4).forEach((event) => items.next(event));
    items.complete();

    expect(res.headers["Content-Type"]).toBe(PROTOBUF_MEDIA_TYPE);
    const bytes = bytesOf(res);
    expect(frameLengths(bytes)).toHaveLength(run.length);
    const events = await decodeEvents(bytes, PROTOBUF_MEDIA_TYPE);
    expect(events).toEqual(run);
    await expectValidRun(events);
    expect(res.ended).toBe(true);
  });

  it("decodes to the same list as the SSE stream of the same items", async () => {
    const items: SseItem[] = [
      started,
      content("a"),
      HEARTBEAT,
      content("b\nc"),
      { type: EventType.CUSTOM, name: "x", value: { n: 1.5 } },
      finished,
    ];
    const decoded = async (encoding: typeof SSE_ENCODING) => {
      const res = new FakeResponse();
      const subject = new Subject<SseItem>();
      pipeToSse(subject, res.asResponse(), () => {}, { encoding });
      items.forEach((item) => subject.next(item));
      subject.complete();
      return decodeEvents(bytesOf(res), encoding.headers["Content-Type"]!);
    };
    const overSse = await decoded(SSE_ENCODING);
    expect(overSse).toEqual(items.filter((item) => item !== HEARTBEAT));
    expect(await decoded(PROTOBUF_ENCODING)).toEqual(overSse);
  });

  it("leaves a quiet stream silent: heartbeats write nothing and arm nothing", async () => {
    fakeTimers();
    const res = new FakeResponse();
    const items = new Subject<SseItem>();
    pipeToSse(items, res.asResponse(), () => {}, { encoding: PROTOBUF_ENCODING, stallMs: 10_000 });
    for (let beat = 0; beat < 5; beat++) {
      items.next(HEARTBEAT);
      await nextTick();
      jest.advanceTimersByTime(15_000);
    }
    expect(res.written).toEqual([]);
    expect(jest.getTimerCount()).toBe(0);
    expect(res.destroyed).toBe(false);
    expect(items.observed).toBe(true);
  });

  it("closes the gate past the high-water mark, opens it on drain, and writes pieces of at most 64 KiB and one frame", () => {
    const res = new FakeResponse();
    const items = new Subject<SseItem>();
    const gate = new FlowGate();
    const pressure: Array<[number, boolean]> = [];
    pipeToSse(items, res.asResponse(), () => {}, {
      encoding: PROTOBUF_ENCODING,
      highWaterMark: 64 * KIB,
      gate,
      onPressure: (unsent, reading) => pressure.push([unsent, reading]),
    });
    const event = content("x".repeat(1000));
    const frameBytes = Buffer.byteLength(PROTOBUF_ENCODING.encode(event));
    for (let i = 0; i < 200; i++) items.next(event);

    expect(gate.isOpen).toBe(false);
    const firstClosed = pressure.findIndex(([, reading]) => !reading);
    expect(pressure[firstClosed]![0]).toBeGreaterThan(64 * KIB);
    expect(pressure.slice(0, firstClosed).every(([unsent]) => unsent <= 64 * KIB)).toBe(true);
    expect(res.written.every((chunk) => Buffer.byteLength(chunk) <= 64 * KIB + frameBytes)).toBe(true);

    res.read();
    expect(gate.isOpen).toBe(true);
    items.complete();
    expect(frameLengths(bytesOf(res))).toHaveLength(200);
  });

  it("drops a client that takes nothing for the stall time, as on a disconnect", async () => {
    fakeTimers();
    const res = new FakeResponse();
    const items = new Subject<SseItem>();
    const dropped: number[] = [];
    let left = false;
    pipeToSse(items.pipe(finalize(() => (left = true))), res.asResponse(), () => {}, {
      encoding: PROTOBUF_ENCODING,
      stallMs: 10_000,
      onSlowClient: (unsent) => dropped.push(unsent),
    });
    items.next(content("x".repeat(1000)));
    await nextTick();
    const unsent = res.writableLength;
    for (let second = 1; second < 10; second++) {
      jest.advanceTimersByTime(1000);
      items.next(HEARTBEAT);
      await nextTick();
    }
    expect(left).toBe(false);
    jest.advanceTimersByTime(1000);
    expect(left).toBe(true);
    expect(res.destroyed).toBe(true);
    expect(dropped).toEqual([unsent]);
    expect(jest.getTimerCount()).toBe(0);
  });
});
