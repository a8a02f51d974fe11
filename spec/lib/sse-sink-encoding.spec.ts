/**
 * The SSE sink cannot be made to throw by what it encodes: an item
 * JSON.stringify refuses ends the run with RUN_ERROR, the run is
 * unsubscribed (as for a client that left, which cancels its task), and
 * nothing escapes to rxjs's unhandled-error hook (in the service, an
 * uncaught exception that ends the process and every other stream).
 */
import { EventType, type AGUIEvent } from "@ag-ui/core";
import { afterEach, beforeEach, describe, expect, it } from "@jest/globals";
import { Observable, Subject, config as rxjsConfig, finalize } from "rxjs";
import { pipeToSse, type SseResponse } from "../../lib/http/sse-sink.js";
import type { SseItem } from "../../lib/run.js";
import { expectValidRun } from "../support/agui.js";

class RecordingResponse {
  written = "";
  writableLength = 0;
  ended = false;
  destroyed = false;
  writeHead() {
    return this;
  }
  flushHeaders() {}
  write(chunk: string) {
    if (this.ended) throw new Error("write after end");
    this.written += chunk;
    return true;
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
  events(): unknown[] {
    return this.written
      .split("\n\n")
      .filter((record) => record.startsWith("data: "))
      .map((record) => JSON.parse(record.slice("data: ".length)) as unknown);
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

describe("pipeToSse with an item it cannot encode", () => {
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
    pipeToSse(items.pipe(finalize(() => (unsubscribed = true))), res.asResponse(), (error) => reported.push(error));
    items.next(started);
    items.next(custom(value()));
    items.next(custom("after the failure"));
    await afterReports();

    expect(unhandled).toEqual([]);
    expect(reported).toHaveLength(1);
    expect(unsubscribed).toBe(true);
    expect(res.ended).toBe(true);
    const events = res.events();
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
    pipeToSse(synchronous, res.asResponse(), () => {});
    await afterReports();
    expect(unhandled).toEqual([]);
    expect(unsubscribed).toBe(true);
    expect(res.ended).toBe(true);
    expect(res.events()).toEqual([started, expect.objectContaining({ type: EventType.RUN_ERROR, code: "INTERNAL_ERROR" })]);
  });
});
