/**
 * Turns a recorded wire frame into an event for the live task: placeholders
 * are filled and the payload's ids are forced to the live ones, so a fixture
 * recorded against one task replays correctly against any other.
 */
import { StreamResponse } from "@a2a-js/sdk";
import { AgentEvent, type AgentExecutionEvent } from "@a2a-js/sdk/server";
import { frameKey } from "./fixtures.js";

export interface LiveIds {
  taskId: string;
  contextId: string;
}

/** Replaces `${taskId}` and `${contextId}` inside every string value. */
export function fillPlaceholders(value: unknown, ids: LiveIds): unknown {
  if (typeof value === "string") {
    return value.replaceAll("${taskId}", ids.taskId).replaceAll("${contextId}", ids.contextId);
  }
  if (Array.isArray(value)) return value.map((item) => fillPlaceholders(item, ids));
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fillPlaceholders(v, ids)]));
  }
  return value;
}

/** `frame` is one A2A 1.0 StreamResponse in wire JSON (`{"statusUpdate": {...}}`). */
export function toLiveEvent(frame: unknown, ids: LiveIds): AgentExecutionEvent {
  const key = frameKey(frame);
  if (!key) throw new Error(`not a StreamResponse frame: ${JSON.stringify(frame)}`);
  const payload = fillPlaceholders((frame as Record<string, unknown>)[key], ids) as Record<string, unknown>;
  const live =
    key === "task"
      ? { ...payload, id: ids.taskId, contextId: ids.contextId }
      : { ...payload, taskId: ids.taskId, contextId: ids.contextId };
  const { payload: event } = StreamResponse.fromJSON({ [key]: live });
  switch (event?.$case) {
    case "task":
      return AgentEvent.task(event.value);
    case "statusUpdate":
      return AgentEvent.statusUpdate(event.value);
    case "artifactUpdate":
      return AgentEvent.artifactUpdate(event.value);
    case "message":
      return AgentEvent.message(event.value);
    case undefined:
      throw new Error(`the SDK could not read the frame ${JSON.stringify(frame)}`);
  }
}
