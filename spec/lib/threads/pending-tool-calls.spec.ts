import { describe, expect, it } from "@jest/globals";
import type { Message } from "@ag-ui/core";
import type { PendingInput } from "../../../lib/state/thread-state.js";
import { withPendingToolCalls } from "../../../lib/threads/pending-tool-calls.js";

const permission = (toolUseId: string): PendingInput => ({
  value: {
    inputId: `perm-${toolUseId}`,
    kind: "permission",
    toolUseId,
    toolName: "ros_deploy_stack",
    displayParameters: { stackName: "demo" },
  },
  sideband: false,
});

describe("the tool call a pending interrupt waits on, for a kernel whose history keeps text only", () => {
  it("goes in the assistant message of the turn that asked, once", () => {
    const messages: Message[] = [
      { id: "m1", role: "user", content: "deploy" },
      { id: "run-1:k", role: "assistant", content: "I'll deploy it." },
    ];
    const shown = withPendingToolCalls(messages, [permission("call-1")], "run-1");
    expect(shown).toEqual([
      messages[0],
      {
        id: "run-1:k",
        role: "assistant",
        content: "I'll deploy it.",
        toolCalls: [{ id: "call-1", type: "function", function: { name: "ros_deploy_stack", arguments: '{"stackName":"demo"}' } }],
      },
    ]);
    expect(withPendingToolCalls(shown, [permission("call-1")], "run-1")).toBe(shown);
  });

  it("gets a message of its own, named as a live turn that only called tools, when the turn said nothing", () => {
    const messages: Message[] = [{ id: "m1", role: "user", content: "deploy" }];
    expect(withPendingToolCalls(messages, [permission("call-1")], "run-1").at(-1)).toEqual({
      id: "run-1:tool-calls:call-1",
      role: "assistant",
      toolCalls: [{ id: "call-1", type: "function", function: { name: "ros_deploy_stack", arguments: '{"stackName":"demo"}' } }],
    });
  });

  it("leaves an interrupt that names no call alone", () => {
    const messages: Message[] = [{ id: "m1", role: "user", content: "where?" }];
    const question: PendingInput = { value: { inputId: "q1", kind: "question" }, sideband: false };
    expect(withPendingToolCalls(messages, [question], "run-1")).toBe(messages);
  });
});
