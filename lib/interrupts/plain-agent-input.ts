/**
 * What an agent without iac-code metadata waits on: A2A says only that the
 * task is `input-required` (or `auth-required`), with a message asking for
 * it. That becomes one input the user answers in their own words: a
 * selection without options, so its `responseSchema` is free text, and its
 * answer goes back to the same task as a text message (`answer-message.ts`).
 *
 *   status {state: input-required, message: "Which colour?"}
 *     → {inputId: "input-<hash>", kind: "a2a_input_required", prompt: "Which colour?", allowFreeText: true, required: true}
 *
 * The id is made from the task and the asking message, so the stream that
 * parks the task and a later GetTask of it name the same input, and an
 * answered one is known again when a snapshot repeats it.
 */
import { createHash } from "node:crypto";
import type { KernelInput } from "../model/kernel-signal.js";

/** The two states in which an A2A agent waits for the user. */
export type WaitingState = "input-required" | "auth-required";

export interface PlainAgentWait {
  taskId: string | undefined;
  state: WaitingState;
  /** The agent's words, if its status carried a message (none: the interrupt says "input required" in the user's language). */
  prompt: string;
  /** The asking message's id, which tells one question of a task from the next. */
  messageId: string | undefined;
}

export function plainAgentInput({ taskId, state, prompt, messageId }: PlainAgentWait): KernelInput {
  const asked = createHash("sha256")
    .update(`${taskId ?? ""}\u0000${state}\u0000${messageId ?? prompt}`, "utf8")
    .digest("hex")
    .slice(0, 32);
  return {
    projection: {
      schemaVersion: 1,
      kind: state === "auth-required" ? "a2a_auth_required" : "a2a_input_required",
      inputId: `input-${asked}`,
      ...(taskId === undefined ? {} : { requestTaskId: taskId }),
      ...(prompt === "" ? {} : { prompt }),
      allowFreeText: true,
      required: true,
    },
    sideband: false,
  };
}
