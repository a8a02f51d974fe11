/**
 * The demo kernel plays a fixture twice on one thread (issue 21, item 6):
 * the second play names its tool calls afresh, so a chat keyed on tool call
 * ids shows each turn's results under that turn's calls. Asserted on what
 * @ag-ui/client's HttpAgent ends with.
 */
import os from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import type { Message } from "@ag-ui/core";
import { httpAgent, runHttpAgent, userMessage } from "../support/http-agent.js";
import { startHarness, uniqueId, type Harness } from "../support/service.js";

const forwardedProps = { iacCode: { schemaVersion: 1, rosInvocationId: "ros-1", cwd: os.tmpdir() } };

const callIdsOf = (messages: readonly Message[]) =>
  messages.flatMap((message) => (message.role === "assistant" ? (message.toolCalls ?? []).map(({ id }) => id) : []));

describe("a fixture played twice on one thread", () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness();
  });
  afterAll(() => harness.close());

  it("names the second play's tool calls afresh: every result sits under its own turn's call", async () => {
    const page = httpAgent(harness.service.url);
    for (let turn = 0; turn < 2; turn++) {
      page.messages.push(userMessage("reasoning-tools"));
      expect((await runHttpAgent(page, { runId: uniqueId("run"), forwardedProps })).error).toBeUndefined();
    }
    const calls = callIdsOf(page.messages);
    expect(calls).toEqual([
      "toolu_01HqV3c9demoValidate",
      "toolu_02Kp8x4sdemoPolicy",
      "toolu_01HqV3c9demoValidate~2",
      "toolu_02Kp8x4sdemoPolicy~2",
    ]);
    // Each turn: its user message, then its calls' results, each below the message that made the call.
    const secondTurn = page.messages.map(({ role }) => role).lastIndexOf("user");
    const results = page.messages.flatMap((message, index) => (message.role === "tool" ? [{ index, toolCallId: message.toolCallId }] : []));
    expect(results.map(({ toolCallId }) => toolCallId)).toEqual(calls);
    for (const { index, toolCallId } of results) {
      expect(index > secondTurn).toBe(toolCallId.endsWith("~2"));
    }
  });
});
