import { expect } from "@jest/globals";
import type { AGUIEvent, BaseEvent } from "@ag-ui/core";
import { EventSchemas } from "@ag-ui/core/schemas";
import { enforceEvents, transformChunks, verifyEvents } from "@ag-ui/client";
import { from, lastValueFrom, toArray, type OperatorFunction } from "rxjs";

/**
 * The checks every stream a test produces must pass: each event against the
 * official zod schema, the whole sequence through @ag-ui/client's verifier,
 * and a terminal event last (the verifier does not check that one).
 */
export async function expectValidRun(events: readonly unknown[]): Promise<void> {
  for (const event of events) {
    const parsed = EventSchemas.safeParse(event);
    if (!parsed.success) throw new Error(`schema violation in ${JSON.stringify(event)}: ${parsed.error.message}`);
    // The schemas strip unknown keys; an event that loses one is carrying data a client will never see.
    expect(parsed.data).toEqual(event);
  }
  // @ag-ui/client bundles its own rxjs: same runtime contract, different type identity.
  const [enforce, chunks, verify] = [enforceEvents(), transformChunks(false), verifyEvents(false)] as unknown as OperatorFunction<
    BaseEvent,
    BaseEvent
  >[];
  await lastValueFrom(from(events as BaseEvent[]).pipe(enforce!, chunks!, verify!, toArray()));
  const last = events.at(-1) as AGUIEvent | undefined;
  expect(["RUN_FINISHED", "RUN_ERROR"]).toContain(last?.type);
  expect(openSpansAtTheEnd(events as AGUIEvent[])).toEqual([]);
}

/** Spans a start opens and its end closes, by the field that names them. */
const SPANS: Record<string, { closes: string; key: string }> = {
  TEXT_MESSAGE_START: { closes: "TEXT_MESSAGE_END", key: "messageId" },
  TOOL_CALL_START: { closes: "TOOL_CALL_END", key: "toolCallId" },
  REASONING_START: { closes: "REASONING_END", key: "messageId" },
  REASONING_MESSAGE_START: { closes: "REASONING_MESSAGE_END", key: "messageId" },
  STEP_STARTED: { closes: "STEP_FINISHED", key: "stepName" },
};

/**
 * The spans still open when the stream ends. The verifier lets a RUN_ERROR
 * end a run with spans open; this service closes every one before either
 * terminal event, and the tests hold it to that.
 */
export function openSpansAtTheEnd(events: readonly AGUIEvent[]): string[] {
  // Counted, not a set: a span opened twice under one name needs two ends.
  const open = new Map<string, number>();
  const change = (span: string, by: number) => open.set(span, (open.get(span) ?? 0) + by);
  for (const event of events) {
    const fields = event as unknown as Record<string, string>;
    const opened = SPANS[event.type];
    if (opened) change(`${event.type} ${fields[opened.key]}`, 1);
    for (const [start, { closes, key }] of Object.entries(SPANS)) {
      if (event.type === closes) change(`${start} ${fields[key]}`, -1);
    }
  }
  return [...open].flatMap(([span, count]) => (count > 0 ? [span] : []));
}
