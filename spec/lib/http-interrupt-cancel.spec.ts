/**
 * A user who cancels what the agent asked (issue 21, item 1): a question,
 * a deployment confirmation or a permission, answered `cancelled` through
 * @ag-ui/client's stock HttpAgent on the demo kernel. The chat must stay
 * usable: the run finishes (a client clears its pending interrupts only on
 * RUN_FINISHED), every tool call has its result below it, and the next
 * message on the thread is sent and answered.
 */
import os from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { EventType, type AGUIEvent, type Message } from "@ag-ui/core";
import { expectValidRun } from "../support/agui.js";
import { httpAgent, runHttpAgent, userMessage } from "../support/http-agent.js";
import { startHarness, uniqueId, type Harness } from "../support/service.js";

/** Every tool call of an assistant message has exactly one tool message answering it, somewhere below it. */
function expectEveryToolCallAnswered(messages: readonly Message[]) {
  messages.forEach((message, index) => {
    if (message.role !== "assistant") return;
    for (const call of message.toolCalls ?? []) {
      const results = messages.filter((other) => other.role === "tool" && other.toolCallId === call.id);
      expect({ call: call.id, results: results.length }).toEqual({ call: call.id, results: 1 });
      expect(messages.indexOf(results[0]!)).toBeGreaterThan(index);
    }
  });
}

const terminalOf = (events: AGUIEvent[]) =>
  events.filter((event) => event.type === EventType.RUN_FINISHED || event.type === EventType.RUN_ERROR);

describe("cancelling an interrupt keeps the chat usable", () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness();
  });
  afterAll(() => harness.close());

  const forwardedProps = (display?: Record<string, unknown>) => ({
    iacCode: { schemaVersion: 1, rosInvocationId: "ros-1", cwd: os.tmpdir() },
    ...(display ? { iacCodeDisplay: display } : {}),
  });

  async function cancelled(fixture: string, display?: Record<string, unknown>) {
    const agent = httpAgent(harness.service.url, { messages: [userMessage(fixture)] });
    const props = forwardedProps(display);
    const asked = await runHttpAgent(agent, { runId: uniqueId("run"), forwardedProps: props });
    expect(asked.error).toBeUndefined();
    const [interrupt] = agent.pendingInterrupts;
    expect(interrupt).toBeDefined();
    const resume = [{ interruptId: interrupt!.id, status: "cancelled" as const }];
    const cancel = await runHttpAgent(agent, { runId: uniqueId("run"), forwardedProps: props, resume });
    expect(cancel.error).toBeUndefined();
    await expectValidRun(cancel.events);
    return { agent, props, interrupt: interrupt!, cancel };
  }

  it.each([
    ["question", "toolu_question_1"],
    ["deploy-confirm", "toolu_confirm_1"],
  ])(
    "%s cancelled: RUN_FINISHED with result {cancelled: true}, the tool call answered as cancelled, and the next message runs",
    async (fixture, toolCallId) => {
      const { agent, props, cancel } = await cancelled(fixture);
      expect(terminalOf(cancel.events)).toEqual([
        expect.objectContaining({ type: EventType.RUN_FINISHED, outcome: { type: "success" }, result: { cancelled: true } }),
      ]);
      expect(agent.pendingInterrupts).toEqual([]);
      const result = agent.messages.find((message) => message.role === "tool" && message.toolCallId === toolCallId);
      expect(result).toMatchObject({ content: "The execution was cancelled by the interrupt response." });
      expectEveryToolCallAnswered(agent.messages);
      // The task the user walked away from is cancelled in the kernel.
      expect(harness.kernel.received.some((call) => call.method === "CancelTask")).toBe(true);

      agent.messages.push(userMessage("chat"));
      const next = await runHttpAgent(agent, { runId: uniqueId("run"), forwardedProps: props });
      expect(next.error).toBeUndefined();
      await expectValidRun(next.events);
      expect(terminalOf(next.events)).toEqual([expect.objectContaining({ type: EventType.RUN_FINISHED, outcome: { type: "success" } })]);
      expect(agent.messages.at(-1)).toMatchObject({
        role: "assistant",
        content: expect.stringMatching(/^Hi! This is the iac-code-agui demo kernel/),
      });
      expectEveryToolCallAnswered(agent.messages);
    },
  );

  it("a question cancelled with interrupts shown as tools: the interrupt's own call is answered too", async () => {
    const { agent, interrupt } = await cancelled("question", { interruptsAsTools: true });
    const own = agent.messages.find((message) => message.role === "tool" && message.toolCallId === interrupt.id);
    expect(JSON.parse(String(own?.content))).toEqual({ status: "cancelled", payload: null });
    expectEveryToolCallAnswered(agent.messages);
  });

  it("a permission cancelled is still a denial the kernel goes on from: the run finishes as a success", async () => {
    const { agent, props, cancel } = await cancelled("permission");
    expect(terminalOf(cancel.events)).toEqual([expect.objectContaining({ type: EventType.RUN_FINISHED, outcome: { type: "success" } })]);
    expect(agent.pendingInterrupts).toEqual([]);
    expectEveryToolCallAnswered(agent.messages);
    agent.messages.push(userMessage("chat"));
    const next = await runHttpAgent(agent, { runId: uniqueId("run"), forwardedProps: props });
    expect(next.error).toBeUndefined();
  });
});
