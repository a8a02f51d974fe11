/**
 * Turns a recorded wire frame into an event for the live task: placeholders
 * are filled and the payload's ids are forced to the live ones, so a fixture
 * recorded against one task replays correctly against any other.
 */
import { StreamResponse } from "@a2a-js/sdk";
import { AgentEvent, type AgentExecutionEvent } from "@a2a-js/sdk/server";
import { frameKey } from "../fixtures/fixture-format.js";
import { fillPlaceholders, type LiveIds } from "../fixtures/placeholders.js";

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
