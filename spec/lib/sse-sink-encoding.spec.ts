/**
 * The SSE sink cannot be made to throw by what it encodes, in either
 * encoding: an item JSON.stringify (or the protobuf encoder, which refuses
 * the same values) cannot encode ends the run with RUN_ERROR, the run is
 * unsubscribed (as for a client that left, which cancels its task), and
 * nothing escapes to rxjs's unhandled-error hook (in the service, an
 * uncaught exception that ends the process and every other stream).
 */
import { EventType, type AGUIEvent } from "@ag-ui/core";
import { afterEach, beforeEach, describe, expect, it } from "@jest/globals";
import { Observable, Subject, config as rxjsConfig, finalize } from "rxjs";
import { PROTOBUF_ENCODING, SSE_ENCODING, type EventEncoding } from "../../lib/http/event-encoding.js";
import { pipeToSse, type SseResponse } from "../../lib/http/sse-sink.js";
import type { SseItem } from "../../lib/run-pipeline.js";
import { expectValidRun } from "../support/agui.js";
import { decodeEvents } from "../support/event-streams.js";

class RecordingResponse {
  written: Array<string | Uint8Array> = [];
  writableLength = 0;
  ended = false;
  destroyed = false;
  writeHead() {
    return this;
  }
  vary() {
    return this;
  }
  getHeaderNames(): string[] {
    return [];
  }
  flushHeaders() {}
  write(chunk: string | Uint8Array) {
    if (this.ended) throw new Error("write after end");
    this.written.push(chunk);
    return true;
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
    return this;
  }
  on() {
    return this;
  }
  asResponse() {
    return this as unknown as SseResponse;
  }
  /** What a client decodes from what was written. */
  events(encoding: EventEncoding): Promise<unknown[]> {
    const bytes = Buffer.concat(this.written.map((chunk) => (typeof chunk === "string" ? Buffer.from(chunk) : chunk)));
    return decodeEvents(bytes, encoding.headers["Content-Type"]!);
  }
}

const started: AGUIEvent = { type: EventType.RUN_STARTED, threadId: "t", runId: "r" };
const custom = (value: unknown): AGUIEvent => ({ type: EventType.CUSTOM, name: "x", value });

/** Values JSON.stringify throws on. */
/** rxjs reports an unhandled error on a timer of 0 ms; one armed after it runs after it. */
const afterReports = () => new Promise((resolve) => setTimeout(resolve, 0));

const circular = () => {
  const value: Record<string, unknown> = {};
  value.self = value;
  return value;
};
const unencodable: Array<[string, () => unknown]> = [
  ["a circular value", circular],
  ["a BigInt", () => 1n],
  ["a value nested past the stack", () => JSON.parse('{"d":'.repeat(50_000) + "1" + "}".repeat(50_000)) as unknown],
];

describe.each([
  ["SSE", SSE_ENCODING],
  ["protobuf", PROTOBUF_ENCODING],
])("pipeToSse in %s with an item it cannot encode", (_encodingName, encoding) => {
  const unhandled: unknown[] = [];
  beforeEach(() => {
    rxjsConfig.onUnhandledError = (error) => unhandled.push(error);
  });
  afterEach(() => {
    rxjsConfig.onUnhandledError = null;
    unhandled.length = 0;
  });

  it.each(unencodable)("ends the run with RUN_ERROR after what was sent, and unsubscribes it (%s)", async (_name, value) => {
    const res = new RecordingResponse();
    const items = new Subject<SseItem>();
    let unsubscribed = false;
    const reported: unknown[] = [];
    pipeToSse(items.pipe(finalize(() => (unsubscribed = true))), res.asResponse(), (error) => reported.push(error), { encoding });
    items.next(started);
    items.next(custom(value()));
    items.next(custom("after the failure"));
    await afterReports();

    expect(unhandled).toEqual([]);
    expect(reported).toHaveLength(1);
    expect(unsubscribed).toBe(true);
    expect(res.ended).toBe(true);
    const events = await res.events(encoding);
    expect(events).toEqual([started, expect.objectContaining({ type: EventType.RUN_ERROR, code: "INTERNAL_ERROR" })]);
    await expectValidRun(events);
  });

  it("does the same when an item cannot be encoded while the run is still subscribing", async () => {
    const res = new RecordingResponse();
    let unsubscribed = false;
    const synchronous = new Observable<SseItem>((subscriber) => {
      subscriber.next(started);
      subscriber.next(custom(1n));
      subscriber.next(custom("after the failure"));
      return () => (unsubscribed = true);
    });
    pipeToSse(synchronous, res.asResponse(), () => {}, { encoding });
    await afterReports();
    expect(unhandled).toEqual([]);
    expect(unsubscribed).toBe(true);
    expect(res.ended).toBe(true);
    expect(await res.events(encoding)).toEqual([started, expect.objectContaining({ type: EventType.RUN_ERROR, code: "INTERNAL_ERROR" })]);
  });
});
