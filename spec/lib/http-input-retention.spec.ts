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
import os from "node:os";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "@jest/globals";
import { EventType, type AGUIEvent, type RunFinishedEvent } from "@ag-ui/core";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { startService, type RunningService } from "../../lib/server.js";
import { expectValidRun } from "../support/agui.js";
import { startBurstKernel, type BurstKernel } from "../support/burst-kernel.js";
import { httpAgent, userMessage } from "../support/http-agent.js";
import { openRun, parseSse } from "../support/service-process.js";
import { recordedTurn, startStepKernel, type StepKernel } from "../support/step-kernel.js";
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

/**
 * Watches the service's JSON.parse (the context's, which its body parser calls) until `stop`: `deref` gives the
 * first parsed `messages` array that starts with the message `marker`, while nothing else keeps it.
 */
function watchParsedMessages(marker: string): { parsed: () => WeakRef<object> | undefined; stop: () => void } {
  let parsedMessages: WeakRef<object> | undefined;
  const parse = JSON.parse;
  JSON.parse = function observedParse(this: unknown, text: string, reviver?: Parameters<typeof parse>[1]) {
    const value: unknown = parse.call(JSON, text, reviver);
    const messages = (value as { messages?: unknown } | null)?.messages;
    if (Array.isArray(messages) && (messages[0] as { id?: unknown } | undefined)?.id === marker) parsedMessages ??= new WeakRef(messages);
    return value;
  } as typeof JSON.parse;
  return { parsed: () => parsedMessages, stop: () => (JSON.parse = parse) };
}

/**
 * Watches the service's JSON.stringify until `stop`: `deref` gives the params of the first streaming call it
 * sends the kernel (the user's message, for a new turn), while nothing else keeps them.
 */
function watchKernelParams(): { sent: () => WeakRef<object> | undefined; stop: () => void } {
  let params: WeakRef<object> | undefined;
  const stringify = JSON.stringify;
  JSON.stringify = function observedStringify(this: unknown, ...args: Parameters<typeof stringify>) {
    const value = args[0] as { method?: unknown; params?: unknown } | null;
    if (typeof value?.method === "string" && /StreamingMessage|message\/stream/.test(value.method) && typeof value.params === "object")
      params ??= new WeakRef(value.params as object);
    return stringify.apply(JSON, args);
  } as typeof JSON.stringify;
  return { sent: () => params, stop: () => (JSON.stringify = stringify) };
}

const pipelineProps = { schemaVersion: 1, rosInvocationId: "ros-1", cwd: os.tmpdir(), runMode: "pipeline", pipelineName: "demo" };

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

  /** Cancels the open run's execution; its stream then ends, well formed, with RUN_ERROR CANCELLED. */
  async function cancelAndExpectEnd(run: Awaited<ReturnType<typeof openRun>>, shown: AGUIEvent[], threadId: string): Promise<void> {
    const response = await fetch(`${service.url}/extensions/iac-code/v1/executions/${sessionOf(shown).executionId}/cancel`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ threadId, rosInvocationId: "ros-1" }),
    });
    expect(await response.json()).toMatchObject({ status: "cancelled" });
    const events = await parseSse(await run.rest);
    await expectValidRun(events);
    expect(events.at(-1)).toMatchObject({ type: EventType.RUN_ERROR, code: "CANCELLED" });
  }

  it("keeps none of the conversation its input carried once RUN_STARTED went out", async () => {
    const base = runInput(JSON.stringify({ deltas: 1, hold: true }));
    const input = { ...base, messages: [...history(), ...base.messages] };
    const marker = input.messages[0]!.id;

    const watch = watchParsedMessages(marker);
    let run: Awaited<ReturnType<typeof openRun>>;
    try {
      // Open and idle: its text and its session event went out, and the kernel holds the task running.
      run = await openRun(service.url, input, (raw) => raw.includes(EventType.TEXT_MESSAGE_CONTENT) && raw.includes("iac-code.session.v1"));
    } finally {
      watch.stop();
    }
    expect(watch.parsed()).toBeDefined();
    const shown = await parseSse(run.raw.slice(0, run.raw.lastIndexOf("\n\n") + 2));
    // RUN_STARTED echoed the whole conversation, so it was there to be kept.
    expect((shown[0] as { input?: { messages: unknown[] } }).input?.messages).toHaveLength(input.messages.length);

    await collectFully();
    expect(watch.parsed()!.deref()).toBeUndefined();

    // The stream was open all along: it ends only now, when its execution is cancelled.
    await cancelAndExpectEnd(run, shown, input.threadId);
  });

  it("keeps none of the request it sent the kernel while the kernel's stream is open", async () => {
    const input = runInput(JSON.stringify({ deltas: 1, hold: true }));
    const watch = watchKernelParams();
    let run: Awaited<ReturnType<typeof openRun>>;
    try {
      run = await openRun(service.url, input, (raw) => raw.includes(EventType.TEXT_MESSAGE_CONTENT) && raw.includes("iac-code.session.v1"));
    } finally {
      watch.stop();
    }
    expect(watch.sent()).toBeDefined();

    await collectFully();
    expect(watch.sent()!.deref()).toBeUndefined();

    await cancelAndExpectEnd(run, await parseSse(run.raw.slice(0, run.raw.lastIndexOf("\n\n") + 2)), input.threadId);
  });
});

describe("an open resume's stream", () => {
  let kernel: StepKernel | undefined;
  let service: RunningService | undefined;
  afterEach(async () => {
    await service?.close();
    await kernel?.close();
  });

  const paused = recordedTurn("pipeline-permission");
  const allowed = recordedTurn("pipeline-permission", "allow_once");

  it("keeps none of the conversation its answer carried while the resumed task runs", async () => {
    kernel = await startStepKernel(paused, allowed);
    service = await startService(testConfig({ a2aUrl: kernel.url }));
    const earlier = history();
    const agent = httpAgent(service.url, { messages: [...earlier, userMessage("pipeline-permission")] });
    const first: AGUIEvent[] = [];
    const firstRun = agent.runAgent(
      { forwardedProps: { iacCode: pipelineProps } },
      { onEvent: ({ event }) => void first.push(event as AGUIEvent) },
    );
    await kernel.playTo(paused.length);
    await firstRun;
    const finished = first.at(-1) as RunFinishedEvent;
    const [interrupt] = finished.outcome?.type === "interrupt" ? finished.outcome.interrupts : [];

    const watch = watchParsedMessages(earlier[0]!.id);
    const resumedEvents: AGUIEvent[] = [];
    let resumedRuns!: () => void;
    const running = new Promise<void>((resolve) => (resumedRuns = resolve));
    let resumed: Promise<unknown>;
    try {
      resumed = agent.runAgent(
        {
          forwardedProps: { iacCode: pipelineProps },
          resume: [{ interruptId: interrupt!.id, status: "resolved", payload: { decision: "allow_once" } }],
        },
        {
          onEvent: ({ event }) => {
            resumedEvents.push(event as AGUIEvent);
            if (event.type === EventType.CUSTOM && event.name === "iac-code.pipeline.v1") resumedRuns();
          },
        },
      );
      // Three frames into the answer's turn, and the kernel holds the rest: the resumed run is open, its task running.
      await kernel.playTo(paused.length + 3);
      await running;
    } finally {
      watch.stop();
    }
    expect(watch.parsed()).toBeDefined();

    await collectFully();
    expect(watch.parsed()!.deref()).toBeUndefined();

    await kernel.playTo(paused.length + allowed.length);
    await resumed;
    await expectValidRun(resumedEvents);
    expect(resumedEvents.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED });
    expect(agent.messages.slice(0, earlier.length)).toEqual(earlier);
  });
});
