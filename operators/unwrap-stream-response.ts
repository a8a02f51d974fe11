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

const WRAPPER_KEYS: readonly A2AUpdateKind[] = ["task", "statusUpdate", "artifactUpdate", "message"];

export function toA2AUpdate(result: JsonObject): A2AUpdate {
  for (const kind of WRAPPER_KEYS) {
    const body = result[kind];
    if (isObject(body)) return { kind, body };
  }
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
