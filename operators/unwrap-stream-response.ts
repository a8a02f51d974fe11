/**
 * JSON-RPC `result` objects → A2A updates, tagged by what they carry.
 *
 * A2A 1.0 `StreamResponse` wraps its payload by key (`{task}`,
 * `{statusUpdate}`, `{artifactUpdate}`, `{message}`); `GetTask` answers a
 * bare Task. The first key present wins; a result with none of them is read
 * as the payload itself and tagged by its shape.
 *
 *   {statusUpdate:{…}} ─▶ {kind:"statusUpdate", body:{…}}
 */
import { map, type OperatorFunction } from "rxjs";
import { isJsonObject as isObject, type JsonObject } from "../lib/model/json.js";

export type A2AUpdateKind = "task" | "statusUpdate" | "artifactUpdate" | "message";

export interface A2AUpdate {
  kind: A2AUpdateKind;
  body: JsonObject;
}

/**
 * Each wrapper read by name, in the order they are looked for: this runs on
 * every frame, and a read by a key taken from a list (a lookup by a name
 * not known in advance, most often of a key the frame does not have) cost
 * about a sixth of turning a parsed frame into its signals.
 */
export function toA2AUpdate(result: JsonObject): A2AUpdate {
  const { task, statusUpdate, artifactUpdate, message } = result;
  if (isObject(task)) return { kind: "task", body: task };
  if (isObject(statusUpdate)) return { kind: "statusUpdate", body: statusUpdate };
  if (isObject(artifactUpdate)) return { kind: "artifactUpdate", body: artifactUpdate };
  if (isObject(message)) return { kind: "message", body: message };
  return { kind: kindByShape(result), body: result };
}

function kindByShape(body: JsonObject): A2AUpdateKind {
  if ("artifact" in body) return "artifactUpdate";
  if ("parts" in body && "role" in body) return "message";
  if ("id" in body && !("taskId" in body)) return "task";
  return "statusUpdate";
}

export function unwrapStreamResponse(): OperatorFunction<JsonObject, A2AUpdate> {
  return map(toA2AUpdate);
}
