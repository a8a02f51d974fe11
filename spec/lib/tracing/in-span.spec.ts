/**
 * `inSpan` with no span exported (no OTEL variables: `start-tracing.ts`
 * installs only a context manager and the W3C propagator): the work runs in
 * the caller's context itself, not in one entered for a no-op span, which
 * every promise the work made (a run's admission write) would keep alive
 * for as long as the run.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { context, createContextKey, ROOT_CONTEXT, trace } from "@opentelemetry/api";
import { AsyncLocalContextManager } from "../../../lib/tracing/async-local-context.js";
import { inSpan, spansExported } from "../../../lib/tracing/spans.js";

const CALLER = createContextKey("the caller's");

describe("inSpan, with no span exported", () => {
  beforeAll(() => void context.setGlobalContextManager(new AsyncLocalContextManager()));
  afterAll(() => context.disable());

  it("runs the work in the caller's own context, with a span that records nothing, and passes its answer and failure on", async () => {
    expect(spansExported()).toBe(false);
    const callers = ROOT_CONTEXT.setValue(CALLER, "request");
    const seen = await context.with(callers, () =>
      inSpan("admission", { "agui.thread_id": "t-1" }, async (span) => {
        await Promise.resolve();
        return { active: context.active(), recording: span.isRecording(), activeSpan: trace.getActiveSpan() };
      }),
    );
    expect(seen.active).toBe(callers);
    expect(seen.recording).toBe(false);
    expect(seen.activeSpan).toBeUndefined();
    await expect(inSpan("admission", {}, () => Promise.reject(new Error("refused")))).rejects.toThrow("refused");
  });
});
