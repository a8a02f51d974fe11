/**
 * What a page shows after it connects (issue 21, items 2, 3 and 7): the
 * conversation read back from the kernel is the one the live streams
 * built, tool calls, results and thinking included, under the same ids.
 * A page that reloaded gets it whole; a page that still holds it connects
 * and nothing moves. Asserted on what @ag-ui/client's HttpAgent ends with.
 */
import os from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { EventType, PROTOCOL_VERSION, type Message } from "@ag-ui/core";
import { expectValidRun } from "../support/agui.js";
import { connectHttpAgent, connectingAgent, runHttpAgent, userMessage } from "../support/http-agent.js";
import { startHarness, uniqueId, type Harness } from "../support/service.js";

const forwardedProps = { iacCode: { schemaVersion: 1, rosInvocationId: "ros-1", cwd: os.tmpdir() } };

/** What a chat UI draws: every message but the activity cards, which a snapshot leaves where they are. */
const chat = (messages: readonly Message[]) => messages.filter((message) => message.role !== "activity");

describe("connecting to a thread", () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness();
  });
  afterAll(() => harness.close());
  const connectUrl = (threadId: string) => `${harness.service.url}/extensions/iac-code/v1/threads/${encodeURIComponent(threadId)}/connect`;
  const pageAgent = (threadId = uniqueId("thread")) => connectingAgent(harness.service.url, connectUrl(threadId), { threadId });

  /** Three turns as a user lives them: thinking and tools, a permission answered, a plain answer. */
  async function conversationOnAPage() {
    const page = pageAgent();
    const send = async (text: string) => {
      page.messages.push(userMessage(text));
      const run = await runHttpAgent(page, { runId: uniqueId("run"), forwardedProps });
      expect(run.error).toBeUndefined();
      return run;
    };
    await send("reasoning-tools");
    await send("permission");
    const [interrupt] = page.pendingInterrupts;
    const answered = await runHttpAgent(page, {
      runId: uniqueId("run"),
      forwardedProps,
      resume: [{ interruptId: interrupt!.id, status: "resolved", payload: { decision: "allow_once" } }],
    });
    expect(answered.error).toBeUndefined();
    await send("chat");
    return page;
  }

  it("a page that still holds its conversation connects: every message stays, in its place, under its id", async () => {
    const page = await conversationOnAPage();
    const before = structuredClone(page.messages);
    // The conversation is one worth keeping: thinking, tool calls, and each call's result right below it.
    const roles = before.map((message) => message.role);
    expect(roles).toEqual(expect.arrayContaining(["user", "assistant", "reasoning", "tool"]));
    const calls = before.flatMap((message) => (message.role === "assistant" ? (message.toolCalls ?? []) : []));
    expect(calls.map((call) => call.id)).toEqual(["toolu_01HqV3c9demoValidate", "toolu_02Kp8x4sdemoPolicy", "toolu_deploy_1"]);

    const connected = await connectHttpAgent(page);
    expect(connected.error).toBeUndefined();
    await expectValidRun(connected.events);
    expect(page.messages).toEqual(before);
    expect(page.pendingInterrupts).toEqual([]);
  });

  it("a reloaded page gets the whole conversation as the live page had it, and its next message is answered", async () => {
    const live = await conversationOnAPage();
    const reloaded = pageAgent(live.threadId);
    const attached = await connectHttpAgent(reloaded);
    expect(attached.error).toBeUndefined();
    await expectValidRun(attached.events);
    expect(chat(reloaded.messages)).toEqual(chat(live.messages));
    // Every tool result sits right below the call it answers.
    for (const [index, message] of reloaded.messages.entries()) {
      if (message.role !== "tool") continue;
      const above = reloaded.messages
        .slice(0, index)
        .filter((earlier) => earlier.role !== "tool")
        .at(-1);
      expect(above?.role === "assistant" && above.toolCalls?.some((call) => call.id === message.toolCallId)).toBe(true);
    }

    reloaded.messages.push(userMessage("chat"));
    const next = await runHttpAgent(reloaded, { runId: uniqueId("run"), forwardedProps });
    expect(next.error).toBeUndefined();
    expect(next.events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });
  });

  /** Every interrupt kind of the demo kernel, with each kind of answer but a cancel. */
  const answers: Array<[fixture: string, payload: Record<string, unknown>]> = [
    ["permission", { decision: "allow_once" }],
    ["permission", { decision: "deny" }],
    ["question", { selectedId: "cn-shanghai" }],
    ["question", { freeText: "eu-central-1, please" }],
    ["deploy-confirm", { selectedId: "confirm" }],
    ["deploy-confirm", { selectedId: "adjust" }],
  ];

  it.each(answers)(
    "%s answered %j: a reloaded page can answer; once answered, connecting or reloading keeps the chat whole",
    async (fixture, payload) => {
      const page = pageAgent();
      page.messages.push(userMessage(fixture));
      expect((await runHttpAgent(page, { runId: uniqueId("run"), forwardedProps })).error).toBeUndefined();
      expect(page.pendingInterrupts).toHaveLength(1);

      // Paused (HttpAgent itself refuses to connect a page with interrupts pending): a reloaded page gets the chat and the
      // interrupt, ready to answer.
      const whilePaused = pageAgent(page.threadId);
      const attached = await connectHttpAgent(whilePaused);
      expect(attached.error).toBeUndefined();
      await expectValidRun(attached.events);
      expect(chat(whilePaused.messages)).toEqual(chat(page.messages));
      expect(whilePaused.pendingInterrupts).toEqual(page.pendingInterrupts);

      const [interrupt] = page.pendingInterrupts;
      const answered = await runHttpAgent(page, {
        runId: uniqueId("run"),
        forwardedProps,
        resume: [{ interruptId: interrupt!.id, status: "resolved", payload }],
      });
      expect(answered.error).toBeUndefined();
      expect(page.pendingInterrupts).toEqual([]);

      // Answered: the page connects and keeps everything; a reloaded page gets the same chat.
      const done = structuredClone(page.messages);
      expect((await connectHttpAgent(page)).error).toBeUndefined();
      expect(page.messages).toEqual(done);
      const reloaded = pageAgent(page.threadId);
      expect((await connectHttpAgent(reloaded)).error).toBeUndefined();
      expect(chat(reloaded.messages)).toEqual(chat(done));

      // No message twice, and the next message is not refused.
      const ids = done.map(({ id }) => id);
      expect(new Set(ids).size).toBe(ids.length);
      reloaded.messages.push(userMessage("chat"));
      expect((await runHttpAgent(reloaded, { runId: uniqueId("run"), forwardedProps })).error).toBeUndefined();
    },
  );

  it("a thread the service does not know starts its empty stream with the protocol version", async () => {
    const page = pageAgent();
    const attached = await connectHttpAgent(page);
    expect(attached.error).toBeUndefined();
    await expectValidRun(attached.events);
    expect(attached.events[0]).toMatchObject({ type: EventType.RUN_STARTED, protocolVersion: PROTOCOL_VERSION });
    expect(page.messages).toEqual([]);
  });
});
