/**
 * `POST /sandbox/replay` holds back as a run does: a client that stops
 * reading stops the replay (what it has not taken stays unplayed, not
 * buffered in the response), and gets every event once it reads again.
 */
import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { EventType, type AGUIEvent } from "@ag-ui/core";
import { DEFAULT_HIGH_WATER_MARK } from "../../lib/http/sse-sink.js";
import { startService, type RunningService } from "../../lib/server.js";
import { expectValidRun } from "../support/agui.js";
import { parseSse } from "../support/service-process.js";
import { testConfig, waitFor } from "../support/service.js";

// Nothing listens on port 9 (discard) on loopback: a replay calls no kernel.
const NO_KERNEL = "http://127.0.0.1:9/";
/** 3,000 text deltas of 2 KiB: about 6 MiB of body, more as events, far more than loopback sockets hold. */
const DELTAS = 3_000;
const DELTA = "x".repeat(2048);

/** A recording of one long answer, in the fixture format (`examples/fixtures/README.md`). */
function longAnswer(): string {
  const line = (frame: unknown) => JSON.stringify({ delayMs: 0, frame });
  const status = (state: string, text?: string) =>
    line({
      statusUpdate: {
        taskId: "${taskId}",
        contextId: "${contextId}",
        status: {
          state: `TASK_STATE_${state}`,
          ...(text === undefined ? {} : { message: { messageId: "${taskId}-message", role: "ROLE_AGENT", parts: [{ text }] } }),
        },
      },
    });
  // The kernel's session first, as the iac-code kernel sends it: its deltas are never read as cumulative text, so
  // the same chunk again is more text (see `cumulative-text-as-deltas.ts`).
  const session = line({
    statusUpdate: {
      taskId: "${taskId}",
      contextId: "${contextId}",
      status: { state: "TASK_STATE_WORKING" },
      metadata: { iac_code: { iacCodeSessionId: "session-${contextId}" } },
    },
  });
  return [
    line({ task: { id: "${taskId}", contextId: "${contextId}", status: { state: "TASK_STATE_SUBMITTED" } } }),
    session,
    ...Array.from({ length: DELTAS }, () => status("WORKING", DELTA)),
    status("COMPLETED"),
  ].join("\n");
}

describe("a sandbox replay whose client stops reading", () => {
  let service: RunningService;
  let maxUnsent = 0;
  let readingKernel = true;
  beforeAll(async () => {
    service = await startService(testConfig({ a2aUrl: NO_KERNEL }), {
      sse: {
        onPressure: (unsent, reading) => {
          maxUnsent = Math.max(maxUnsent, unsent);
          readingKernel = reading;
        },
      },
    });
  });
  afterAll(() => service?.close());

  it("stops replaying while the client is behind, and sends everything once it reads again", async () => {
    const { hostname, port } = new URL(service.url);
    const response = await new Promise<http.IncomingMessage>((resolve, reject) => {
      const request = http.request(
        { host: hostname, port, method: "POST", path: "/sandbox/replay", agent: false, headers: { "content-type": "application/json" } },
        resolve,
      );
      request.on("error", reject);
      request.end(JSON.stringify({ fixture: longAnswer(), timeScale: 0 }));
    });
    expect(response.statusCode).toBe(200);
    response.pause();

    // The replay stops at the gate: the sink says it no longer reads, and holds no more than its mark and one write.
    await waitFor(() => !readingKernel);
    expect(maxUnsent).toBeGreaterThan(DEFAULT_HIGH_WATER_MARK);
    expect(maxUnsent).toBeLessThan(DEFAULT_HIGH_WATER_MARK + 512 * 1024);

    const chunks: Buffer[] = [];
    response.on("data", (chunk: Buffer) => chunks.push(chunk));
    await new Promise<void>((resolve) => {
      response.once("end", () => resolve());
      response.resume();
    });
    expect(maxUnsent).toBeLessThan(DEFAULT_HIGH_WATER_MARK + 512 * 1024);
    const events: AGUIEvent[] = await parseSse(Buffer.concat(chunks).toString("utf8"));
    await expectValidRun(events);
    expect(events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });
    const text = events.flatMap((event) => (event.type === EventType.TEXT_MESSAGE_CONTENT ? [event.delta] : [])).join("");
    expect(text).toBe(DELTA.repeat(DELTAS));
  });
});
