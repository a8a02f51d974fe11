import { describe, expect, it } from "@jest/globals";
import { EventType } from "@ag-ui/core";
import { EventSchemas } from "@ag-ui/core/schemas";
import { enforceEvents, transformChunks, verifyEvents } from "@ag-ui/client";
import { from, lastValueFrom, toArray } from "rxjs";
import { Low } from "lowdb";
import fetch from "node-fetch";
import { createEventSource } from "eventsource-client";

describe("toolchain", () => {
  it("loads", async () => {
    const events = [
      { type: EventType.RUN_STARTED, threadId: "t", runId: "r" },
      { type: EventType.RUN_FINISHED, threadId: "t", runId: "r" },
    ];
    events.forEach((e) => EventSchemas.parse(e));
    const out = await lastValueFrom(from(events as any[]).pipe(enforceEvents(), transformChunks(false), verifyEvents(false), toArray()));
    expect(out).toHaveLength(2);
    expect(typeof Low).toBe("function");
    expect(typeof fetch).toBe("function");
    expect(typeof createEventSource).toBe("function");
  });
});
