/**
 * A2A 0.3 wire frames as the 0.3 fixtures hold them: one result of
 * `message/stream`, told apart by its `kind` (`task`, `status-update`,
 * `artifact-update`, `message`), not by a wrapping key as in 1.0.
 */
import type { Message, Part, Task } from "a2a-sdk-v03";
import type { AgentExecutionEvent } from "a2a-sdk-v03/server";
import type { FrameFormat } from "../fixtures/fixture-format.js";
import { fillPlaceholders, type LiveIds } from "../fixtures/placeholders.js";
import { isJsonObject } from "../model/json.js";

export const FRAME_KINDS = ["task", "status-update", "artifact-update", "message"] as const;
export type FrameKind = (typeof FRAME_KINDS)[number];

export const V03_FRAMES: FrameFormat = {
  accepts: (frame) => frameKind(frame) !== undefined,
  expected: `an object whose "kind" is one of ${FRAME_KINDS.join(", ")}`,
};

export function frameKind(frame: unknown): FrameKind | undefined {
  if (!isJsonObject(frame)) return undefined;
  return (FRAME_KINDS as readonly unknown[]).includes(frame.kind) ? (frame.kind as FrameKind) : undefined;
}

/**
 * The event a recorded frame is for the live task: placeholders filled and
 * the ids forced to the live ones, so a fixture replays against any task.
 */
export function toLiveEvent(frame: unknown, ids: LiveIds): AgentExecutionEvent {
  const kind = frameKind(frame);
  if (!kind) throw new Error(`not an A2A 0.3 frame: ${JSON.stringify(frame)}`);
  const payload = fillPlaceholders(frame, ids) as Record<string, unknown>;
  switch (kind) {
    case "task":
      return { ...payload, id: ids.taskId, contextId: ids.contextId } as unknown as Task;
    case "message":
      // A message may stand alone, with no task behind it (a stock agent's whole answer).
      return { ...payload, contextId: ids.contextId, ...("taskId" in payload ? { taskId: ids.taskId } : {}) } as unknown as Message;
    case "status-update":
    case "artifact-update":
      return { ...payload, taskId: ids.taskId, contextId: ids.contextId } as unknown as AgentExecutionEvent;
  }
}

/** The message's text parts, concatenated and trimmed. */
export function userText(message: Message): string {
  return message.parts
    .map((part: Part) => (part.kind === "text" ? part.text : ""))
    .join("")
    .trim();
}

/** What a turn section's `when` is matched against: the text, then each data part's compact JSON, one per line. */
export function answerText(message: Message): string {
  const data = message.parts.flatMap((part: Part) => (part.kind === "data" ? [JSON.stringify(part.data)] : []));
  return [userText(message), ...data].filter((piece) => piece !== "").join("\n");
}
