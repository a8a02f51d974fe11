/**
 * The tool call a pending interrupt waits on, in a conversation read back
 * from a kernel whose history keeps no tool statuses (the iac-code kernel
 * records text only): the interrupt names the call (`toolUseId`), and a
 * page that reloads must show it, or the answer's result lands below
 * nothing. It goes where the live run put it: in the assistant message of
 * the turn that made it (the last one after the user's last message), else
 * in one of its own, named as the live run names a turn that only called
 * tools (`model/message-ids.ts`).
 */
import type { Message } from "@ag-ui/core";
import { canonicalJson, isNonEmptyString } from "../model/json.js";
import { toolTurnMessageId } from "../model/message-ids.js";
import type { PendingInput } from "../state/thread-state.js";

export function withPendingToolCalls(messages: Message[], pending: readonly PendingInput[], runId: string): Message[] {
  const shown = new Set(messages.flatMap((message) => (message.role === "assistant" ? (message.toolCalls ?? []).map(({ id }) => id) : [])));
  const missing = pending.filter(({ value }) => isNonEmptyString(value.toolUseId) && !shown.has(value.toolUseId));
  if (missing.length === 0) return messages;
  const out = [...messages];
  const lastUser = out.map((message) => message.role).lastIndexOf("user");
  let turn = out.map((message) => message.role).lastIndexOf("assistant");
  if (turn < lastUser) turn = -1;
  for (const { value } of missing) {
    const id = value.toolUseId as string;
    const call = {
      id,
      type: "function" as const,
      function: {
        name: isNonEmptyString(value.toolName) ? value.toolName : "tool",
        arguments: canonicalJson(value.displayParameters ?? {}),
      },
    };
    if (turn === -1) {
      out.push({ id: toolTurnMessageId(runId, id), role: "assistant", toolCalls: [call] });
      turn = out.length - 1;
      continue;
    }
    const message = out[turn] as Extract<Message, { role: "assistant" }>;
    out[turn] = { ...message, toolCalls: [...(message.toolCalls ?? []), call] };
  }
  return out;
}
