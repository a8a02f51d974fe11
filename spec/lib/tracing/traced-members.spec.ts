/**
 * `tracedMembers`, under the real Node SDK in this process with a span
 * processor that keeps what ends: a promise's span ends when it settles, a
 * stream's when it ends or is left, a call that throws is a failed span, a
 * call `describe` skips makes none, and each span is the active one while
 * its call runs (what a kernel request's `traceparent` is made from).
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { context, SpanStatusCode, trace, type Span } from "@opentelemetry/api";
import { NodeSDK } from "@opentelemetry/sdk-node";
import { firstValueFrom, interval, lastValueFrom, take, throwError } from "rxjs";
import { AguiError } from "../../../lib/errors.js";
import { tracedMembers, type TracedCall } from "../../../lib/tracing/spans.js";

interface EndedSpan {
  name: string;
  spanContext(): { spanId: string };
  parentSpanContext?: { spanId: string } | undefined;
  attributes: Record<string, unknown>;
  status: { code: number };
}

const ended: EndedSpan[] = [];
const sdk = new NodeSDK({
  spanProcessors: [
    {
      onStart: () => {},
      onEnd: (span: EndedSpan) => void ended.push(span),
      forceFlush: () => Promise.resolve(),
      shutdown: () => Promise.resolve(),
    } as never,
  ],
  metricReaders: [],
  logRecordProcessors: [],
  resourceDetectors: [],
});
beforeAll(() => sdk.start());
afterAll(() => sdk.shutdown());

class Boundary {
  seen: Array<string | undefined> = [];
  async answer(value: string): Promise<string> {
    this.seen.push(trace.getActiveSpan() && spanName(trace.getActiveSpan()!));
    return value;
  }
  async refuse(): Promise<never> {
    throw new AguiError("THREAD_BUSY");
  }
  broken(): never {
    throw new Error("a message that must not be recorded");
  }
  records(count: number) {
    return interval(1).pipe(take(count));
  }
  failing() {
    return throwError(() => new AguiError("A2A_UNAVAILABLE"));
  }
  untraced(): Promise<number> {
    return Promise.resolve(1);
  }
}

const spanName = (span: Span) => (span as unknown as EndedSpan).name;
const describeCall = (method: string): TracedCall | undefined =>
  method === "untraced"
    ? undefined
    : { name: `call ${method}`, attributes: { "call.method": method }, stream: method === "records" || method === "failing" };

describe("tracedMembers", () => {
  it("gives each call a span of its own under the active one, active while the call runs", async () => {
    const boundary = new Boundary();
    const traced = tracedMembers(boundary, describeCall);
    const parent = trace.getTracer("spec").startSpan("parent");
    await context.with(trace.setSpan(context.active(), parent), async () => {
      expect(await traced.answer("x")).toBe("x");
      expect(await lastValueFrom(traced.records(3))).toBe(2);
      expect(await traced.untraced()).toBe(1);
    });
    parent.end();
    expect(boundary.seen).toEqual(["call answer"]);
    const byName = new Map(ended.map((span) => [span.name, span]));
    for (const name of ["call answer", "call records"]) {
      expect(byName.get(name)?.parentSpanContext?.spanId).toBe(parent.spanContext().spanId);
      expect(byName.get(name)?.status.code).toBe(SpanStatusCode.UNSET);
    }
    expect(byName.has("call untraced")).toBe(false);
  });

  it("marks a failure by its code, never its message, however the call fails", async () => {
    ended.length = 0;
    const traced = tracedMembers(new Boundary(), describeCall);
    await expect(traced.refuse()).rejects.toThrow(AguiError);
    expect(() => traced.broken()).toThrow("a message that must not be recorded");
    await expect(firstValueFrom(traced.failing())).rejects.toThrow(AguiError);
    const failures = Object.fromEntries(ended.map((span) => [span.name, span]));
    expect(failures["call refuse"]).toMatchObject({ attributes: { "error.type": "THREAD_BUSY" }, status: { code: SpanStatusCode.ERROR } });
    expect(failures["call broken"]).toMatchObject({ attributes: { "error.type": "Error" }, status: { code: SpanStatusCode.ERROR } });
    expect(failures["call failing"]).toMatchObject({
      attributes: { "error.type": "A2A_UNAVAILABLE" },
      status: { code: SpanStatusCode.ERROR },
    });
    expect(JSON.stringify(ended.map((span) => span.attributes))).not.toContain("must not be recorded");
  });

  it("ends a stream's span when its subscriber leaves", async () => {
    ended.length = 0;
    const traced = tracedMembers(new Boundary(), describeCall);
    expect(await firstValueFrom(traced.records(1000))).toBe(0);
    expect(ended.map((span) => span.name)).toEqual(["call records"]);
  });
});
