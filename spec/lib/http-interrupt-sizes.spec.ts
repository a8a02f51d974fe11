/**
 * A kernel's large question is bounded where it is repeated, the same on
 * either store: a pause whose interrupts would be shown larger than a
 * stored state may be is refused before anything is written (the file
 * store used to refuse it while Redis kept it, and a RUN_FINISHED about
 * five times the stored size went out), and a 409 RESUME_REQUIRED names
 * large interrupts instead of repeating them whole on every message.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { EventType, type AGUIEvent, type Interrupt } from "@ag-ui/core";
import type { ReplayTurn } from "../../lib/kernel/replay-kernel.js";
import { startRedisServer, type RedisServer } from "../../lib/testing/redis-server.js";
import { MAX_REPEATED_INTERRUPTS_BYTES, MAX_SHOWN_INTERRUPTS_BYTES } from "../../lib/threads/interrupt-sizes.js";
import { expectValidRun } from "../support/agui.js";
import { httpAgent, runHttpAgent, transcript, userMessage } from "../support/http-agent.js";
import { postRun, runInput, script, startHarness, uniqueId, waitFor, type Harness } from "../support/service.js";

/** Stored, about 3.6 MB (within the 4 MiB state cap as compact JSON, not as the file store used to write it); shown, about 20 MB. */
const HUGE_OPTIONS = 50_000;
/** Shown, about 1.1 MB: offered, but far past what a 409 repeats. */
const WIDE_OPTIONS = 3_000;

const question = (name: string, count: number) => ({
  schemaVersion: 1,
  kind: "ask_user_question",
  requestTaskId: "${taskId}",
  contextId: "${contextId}",
  inputId: `q-${name}`,
  toolUseId: `toolu-${name}`,
  toolName: "AskUserQuestion",
  prompt: "Which one?",
  required: true,
  options: Array.from({ length: count }, (_, i) => ({ id: `option-${i}`, label: `Option number ${i} of a very long list` })),
});

const questions: Record<string, ReturnType<typeof question>> = {
  "huge-question": question("huge", HUGE_OPTIONS),
  "wide-question": question("wide", WIDE_OPTIONS),
};

const asksTheQuestion = (turn: ReplayTurn) => {
  const asked = turn.turnIndex === 0 ? questions[turn.text] : undefined;
  return asked
    ? [
        script.task(),
        script.status("WORKING", { iacCodeSessionId: "sess-${contextId}" }, "Let me ask. "),
        script.status("INPUT_REQUIRED", { input: asked }),
      ]
    : undefined;
};

const forwardedProps = () => runInput("").forwardedProps;
const bytesOf = (value: unknown) => Buffer.byteLength(JSON.stringify(value), "utf8");

let redis: RedisServer;
const harnesses: Record<string, Harness> = {};

beforeAll(async () => {
  redis = await startRedisServer();
  harnesses.file = await startHarness({ script: asksTheQuestion });
  harnesses.redis = await startHarness({ script: asksTheQuestion }, { redisUrl: redis.url });
}, 30_000);
afterAll(async () => {
  for (const harness of Object.values(harnesses)) await harness.close();
  await redis?.stop();
});

describe.each(["file", "redis"])("large interrupts on the %s store", (storeName) => {
  const harnessOf = () => harnesses[storeName]!;

  it("refuses a pause whose interrupts would be shown larger than a state may be: RUN_ERROR, the task cancelled, the thread free", async () => {
    const harness = harnessOf();
    const agent = httpAgent(harness.service.url, { messages: [userMessage("huge-question")] });
    const run = await runHttpAgent(agent, { runId: uniqueId("run"), forwardedProps: forwardedProps() });

    await expectValidRun(run.events);
    expect(run.events.at(-1)).toMatchObject({ type: EventType.RUN_ERROR, code: "STATE_PERSISTENCE_FAILED" });
    expect(run.events.some((event) => event.type === EventType.RUN_FINISHED)).toBe(false);
    // Nothing of the question reached the client: no interrupt to answer, only what the kernel said before it.
    expect(agent.pendingInterrupts).toEqual([]);
    expect(transcript(run.messages)).toEqual([
      { role: "user", content: "huge-question" },
      { role: "assistant", content: "Let me ask. " },
    ]);
    expect(bytesOf(run.events)).toBeLessThan(64 * 1024);

    const session = run.events.find((event) => event.type === EventType.CUSTOM && event.name === "iac-code.session.v1");
    const { taskId } = (session as { value: { taskId: string } }).value;
    await waitFor(() =>
      harness.kernel.received.some((call) => call.method === "CancelTask" && (call.params as { id: string }).id === taskId),
    );
    const next = await postRun(harness.service.url, runInput("chat", { threadId: agent.threadId }));
    expect(next.status).toBe(200);
    await expectValidRun(next.events);
    expect(next.events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });
  });

  it("offers a wide question whole, and a 409 RESUME_REQUIRED then names it without repeating it", async () => {
    const harness = harnessOf();
    const agent = httpAgent(harness.service.url, { messages: [userMessage("wide-question")] });
    const run = await runHttpAgent(agent, { runId: uniqueId("run"), forwardedProps: forwardedProps() });

    await expectValidRun(run.events);
    const finished = run.events.at(-1) as AGUIEvent & { outcome?: { type: string; interrupts?: Interrupt[] } };
    expect(finished).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "interrupt" } });
    expect(bytesOf(finished)).toBeGreaterThan(MAX_REPEATED_INTERRUPTS_BYTES);
    expect(bytesOf(finished)).toBeLessThan(MAX_SHOWN_INTERRUPTS_BYTES);
    const [pending] = agent.pendingInterrupts;
    expect(agent.pendingInterrupts).toHaveLength(1);
    expect(pending).toMatchObject({ id: "q-wide", reason: "input_required", toolCallId: "toolu-wide" });
    expect((pending!.metadata as { options: unknown[] }).options).toHaveLength(WIDE_OPTIONS);

    const refused = await postRun(harness.service.url, runInput("hello again", { threadId: agent.threadId }));
    expect(refused.status).toBe(409);
    expect(Buffer.byteLength(refused.raw, "utf8")).toBeLessThan(MAX_REPEATED_INTERRUPTS_BYTES);
    expect(refused.json).toEqual({
      error: {
        code: "RESUME_REQUIRED",
        message: expect.any(String),
        interrupts: [{ id: "q-wide", reason: "input_required", toolCallId: "toolu-wide", expiresAt: pending!.expiresAt }],
        interruptsAbridged: true,
      },
    });
  });
});
