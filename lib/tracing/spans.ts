/**
 * The service's spans (see docs/operations.md "Traces"): the request's own
 * (`request-span.ts`), and inside it one for admission, one per kernel call
 * and one per store operation. A span names what happened and the ids it
 * happened to (thread, run, execution, task) — never a message, a prompt,
 * an answer, a token or a credential, nor an error's message (a kernel's
 * may quote what it was sent): a failure is told by its code.
 *
 * With traces off the API's tracer makes no spans, only passes the active
 * trace context on (see `start-tracing.ts`), so this costs next to nothing.
 */
import { types } from "node:util";
import {
  context,
  INVALID_SPAN_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Span,
  type Tracer,
} from "@opentelemetry/api";
import { defer, finalize, Observable, tap } from "rxjs";
import { AguiError } from "../errors.js";
import { SERVICE_VERSION } from "../version.js";
import { wrapMethods } from "../wrap-methods.js";

/** Attribute names of the ids a span carries. */
export const ID_ATTRIBUTES = {
  threadId: "agui.thread_id",
  runId: "agui.run_id",
  executionId: "iac_code.execution_id",
  taskId: "a2a.task_id",
} as const;

export const tracer = (): Tracer => trace.getTracer("iac-code-agui", SERVICE_VERSION);

let exported = false;

/**
 * Whether spans are recorded and exported (`start-tracing.ts` started the
 * SDK). Off, the boundaries make no span at all, not even the API's no-op
 * one: each would cost every open stream its wrappers and closures for
 * nothing, while the caller's trace context reaches the kernel all the same.
 */
export const spansExported = (): boolean => exported;

export function markSpansExported(): void {
  exported = true;
}

/** The ids among `ids` (thread, run, execution, task) as span attributes; any other key is left out. */
export function idAttributes(ids: object): Attributes {
  const attributes: Attributes = {};
  for (const [key, name] of Object.entries(ID_ATTRIBUTES)) {
    const value: unknown = (ids as Record<string, unknown>)[key];
    if (typeof value === "string" && value !== "") attributes[name] = value;
  }
  return attributes;
}

/** A failure as the span tells it: its error code (or the error's type), never its message. */
export function markFailed(span: Span, error: unknown): void {
  const type = error instanceof AguiError ? error.code : error instanceof Error ? error.name : "Error";
  span.setAttribute("error.type", type);
  span.setStatus({ code: SpanStatusCode.ERROR });
}

/** What `inSpan` hands its work when no span is exported: it records nothing. */
const UNRECORDED: Span = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/**
 * `work` in a span of its own, a child of the active one, ended when it
 * settles. With no span exported, `work` runs in the caller's context as it
 * is: a context entered for a no-op span would be kept by every promise the
 * work makes, a run's admission write among them, for as long as the run.
 */
export function inSpan<T>(name: string, attributes: Attributes, work: (span: Span) => Promise<T>): Promise<T> {
  if (!spansExported()) return work(UNRECORDED);
  return tracer().startActiveSpan(name, { attributes }, async (span) => {
    try {
      return await work(span);
    } catch (error) {
      markFailed(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

/** How one member's call is traced: its span's name and attributes, and whether it answers a stream. */
export interface TracedCall {
  name: string;
  attributes: Attributes;
  kind?: SpanKind;
  /** An Observable: the span runs from its subscription to its end, error or unsubscription. */
  stream?: boolean;
  /** Ids learned from the stream's items (a task id), added to the span as they come. */
  idsOf?: (item: unknown) => Attributes | undefined;
}

/**
 * A decorator that gives each traced member's call a span, as `timedMembers`
 * (`metrics/timed-members.ts`) times them: a Proxy, standing wherever the
 * object does. The span is the active one while the call runs, so what the
 * call sends on (a kernel request's `traceparent`) names it as the parent.
 * `describe` says which calls are traced (undefined: passed through as they are).
 */
export function tracedMembers<T extends object>(target: T, describe: (method: string, args: unknown[]) => TracedCall | undefined): T {
  return wrapMethods(target, (property, method) => (...args: unknown[]) => {
    const call = describe(property, args);
    if (call === undefined) return method(...args);
    if (call.stream) return tracedStream(call, () => method(...args) as Observable<unknown>);
    const span = tracer().startSpan(call.name, { kind: call.kind ?? SpanKind.INTERNAL, attributes: call.attributes });
    let answer: unknown;
    try {
      answer = context.with(trace.setSpan(context.active(), span), () => method(...args));
    } catch (error) {
      markFailed(span, error);
      span.end();
      throw error;
    }
    if (!(answer instanceof Promise)) {
      span.end();
      return answer;
    }
    answer.then(
      () => span.end(),
      (error: unknown) => {
        markFailed(span, error);
        span.end();
      },
    );
    return answer;
  });
}

/** The members the class declares `async`: its operations, as against its synchronous helpers. */
export const isAsyncMember = (object: object, method: string): boolean => types.isAsyncFunction(Reflect.get(object, method, object));

function tracedStream(call: TracedCall, open: () => Observable<unknown>): Observable<unknown> {
  return defer(() => {
    const span = tracer().startSpan(call.name, { kind: call.kind ?? SpanKind.INTERNAL, attributes: call.attributes });
    const active = trace.setSpan(context.active(), span);
    let idsPending = call.idsOf !== undefined;
    const source = context.with(active, open);
    // Subscribed within the span too: a cold stream sends its request when subscribed, not when made.
    const subscribedWithin = new Observable<unknown>((subscriber) => context.with(active, () => source.subscribe(subscriber)));
    return subscribedWithin.pipe(
      tap({
        next: (item) => {
          if (!idsPending) return;
          const ids = call.idsOf!(item);
          if (ids === undefined) return;
          span.setAttributes(ids);
          idsPending = false;
        },
        error: (error: unknown) => markFailed(span, error),
      }),
      finalize(() => span.end()),
    );
  });
}
