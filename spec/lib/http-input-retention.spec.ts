/**
 * A run does not keep its client's RunAgentInput while its stream is open.
 * CopilotKit and HttpAgent send the whole conversation on every run; the
 * run needs it to start (the request to the kernel, RUN_STARTED's echo)
 * and not after. Before this held, the parsed body stayed reachable from
 * the request, from the run's closures and from the RUN_STARTED event kept
 * for an early failure, so every open stream held its whole history.
 *
 * The test observes the body the service parsed through a `WeakRef` and
 * asks for full collections (`gc`) while the run's stream is still open:
 * deterministic, since a full collection clears every weak reference to an
 * object nothing else reaches.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { EventType, type AGUIEvent } from "@ag-ui/core";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { startService, type RunningService } from "../../lib/server.js";
import { expectValidRun } from "../support/agui.js";
import { startBurstKernel, type BurstKernel } from "../support/burst-kernel.js";
import { openRun, parseSse } from "../support/service-process.js";
import { runInput, testConfig, uniqueId } from "../support/service.js";

setFlagsFromString("--expose-gc");
const collectGarbage = runInNewContext("gc") as () => void;

/** About 900 KB of earlier turns: under the 1 MiB RUN_STARTED still echoes, so the echo is covered too. */
function history(): Array<{ id: string; role: "user" | "assistant"; content: string }> {
  return Array.from({ length: 30 }, (_, index) => ({
    id: uniqueId("earlier"),
    role: index % 2 === 0 ? "user" : "assistant",
    content: `${index}:`.padEnd(30_000, "h"),
  }));
}

/** Full collections, each in a task of its own: a weak reference read in a task holds its target until that task ends. */
async function collectFully(): Promise<void> {
  for (let round = 0; round < 3; round++) {
    await new Promise((resolve) => setImmediate(resolve));
    collectGarbage();
  }
}

const sessionOf = (events: AGUIEvent[]) =>
  (events.find((event) => event.type === EventType.CUSTOM && event.name === "iac-code.session.v1") as { value: { executionId: string } })
    .value;

describe("an open run's stream", () => {
  let kernel: BurstKernel;
  let service: RunningService;
  beforeAll(async () => {
    kernel = await startBurstKernel();
    service = await startService(testConfig({ a2aUrl: kernel.url }));
  });
  afterAll(async () => {
    await service.close();
    await kernel.close();
  });

  it("keeps none of the conversation its input carried once RUN_STARTED went out", async () => {
    const base = runInput(JSON.stringify({ deltas: 1, hold: true }));
    const input = { ...base, messages: [...history(), ...base.messages] };
    const marker = input.messages[0]!.id;

    // The service parses the body with the context's JSON.parse: the test keeps a weak reference to what it built.
    let parsedMessages: WeakRef<object> | undefined;
    const parse = JSON.parse;
    JSON.parse = function observedParse(this: unknown, text: string, reviver?: Parameters<typeof parse>[1]) {
      const value: unknown = parse.call(JSON, text, reviver);
      const messages = (value as { messages?: unknown } | null)?.messages;
      if (Array.isArray(messages) && (messages[0] as { id?: unknown } | undefined)?.id === marker) parsedMessages = new WeakRef(messages);
      return value;
    } as typeof JSON.parse;
    let run: Awaited<ReturnType<typeof openRun>>;
    try {
      // Open and idle: its text and its session event went out, and the kernel holds the task running.
      run = await openRun(service.url, input, (raw) => raw.includes(EventType.TEXT_MESSAGE_CONTENT) && raw.includes("iac-code.session.v1"));
    } finally {
      JSON.parse = parse;
    }
    expect(parsedMessages).toBeDefined();
    const shown = await parseSse(run.raw.slice(0, run.raw.lastIndexOf("\n\n") + 2));
    // RUN_STARTED echoed the whole conversation, so it was there to be kept.
    expect((shown[0] as { input?: { messages: unknown[] } }).input?.messages).toHaveLength(input.messages.length);

    await collectFully();
    expect(parsedMessages!.deref()).toBeUndefined();

    // The stream was open all along: it ends only now, when its execution is cancelled.
    const response = await fetch(`${service.url}/extensions/iac-code/v1/executions/${sessionOf(shown).executionId}/cancel`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ threadId: input.threadId, rosInvocationId: "ros-1" }),
    });
    expect(await response.json()).toMatchObject({ status: "cancelled" });
    const events = await parseSse(await run.rest);
    await expectValidRun(events);
    expect(events.at(-1)).toMatchObject({ type: EventType.RUN_ERROR, code: "CANCELLED" });
  });
});
