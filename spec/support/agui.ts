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
  const [enforce, chunks, verify] = [enforceEvents(), transformChunks(false), verifyEvents(false)] as unknown as OperatorFunction<BaseEvent, BaseEvent>[];
  await lastValueFrom(from(events as BaseEvent[]).pipe(enforce!, chunks!, verify!, toArray()));
  const last = events.at(-1) as AGUIEvent | undefined;
  expect(["RUN_FINISHED", "RUN_ERROR"]).toContain(last?.type);
}
