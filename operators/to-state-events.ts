/**
 * A stream of status objects → `STATE_SNAPSHOT` for the first, then one
 * `STATE_DELTA` per change, as an RFC 6902 patch of the changed top-level
 * keys only (R-SIB-5/6). An unchanged status sends nothing, so an idle
 * thread is a quiet stream.
 *
 *   s1 s1 s2 → SNAPSHOT(s1) DELTA(s1→s2)
 */
import { EventType, type AGUIEvent, type JsonPatchOperation } from "@ag-ui/core";
import { defer, type OperatorFunction } from "rxjs";
import { emitEach } from "./emit-each.js";
import { canonicalJson } from "../lib/model/json.js";

/** JSON Pointer escaping (RFC 6901): `~` → `~0`, `/` → `~1`. */
const pointer = (key: string) => `/${key.replaceAll("~", "~0").replaceAll("/", "~1")}`;

export function topLevelPatch(before: Record<string, unknown>, after: Record<string, unknown>): JsonPatchOperation[] {
  const patch: JsonPatchOperation[] = [];
  for (const key of Object.keys(before)) if (!(key in after)) patch.push({ op: "remove", path: pointer(key) });
  for (const [key, value] of Object.entries(after)) {
    if (!(key in before)) patch.push({ op: "add", path: pointer(key), value });
    else if (canonicalJson(before[key]) !== canonicalJson(value)) patch.push({ op: "replace", path: pointer(key), value });
  }
  return patch;
}

export function toStateEvents<S extends object>(): OperatorFunction<S, AGUIEvent> {
  return (source) =>
    defer(() => {
      let last: Record<string, unknown> | undefined;
      return source.pipe(
        emitEach((status): AGUIEvent[] => {
          const next = status as Record<string, unknown>;
          const previous = last;
          last = next;
          if (previous === undefined) return [{ type: EventType.STATE_SNAPSHOT, snapshot: next }];
          const delta = topLevelPatch(previous, next);
          return delta.length > 0 ? [{ type: EventType.STATE_DELTA, delta }] : [];
        }),
      );
    });
}
