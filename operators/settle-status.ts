/**
 * A stream that shows a status read-model (`STATE_SNAPSHOT`, then
 * `STATE_DELTA`s of top-level keys, see `to-state-events.ts`) ends with the
 * status its own end implies: before `RUN_FINISHED` or `RUN_ERROR`, one
 * `STATE_DELTA` from the status shown so far to `reduce(status, end)`, when
 * they differ. An observer's stream ends at the task's end, which may come
 * before the run it watches has told the thread status so: without this,
 * its last word would be a run still active. The delta carries the end's
 * timestamp; a stream that showed no status gets none.
 *
 *   SNAPSHOT{runActive:true} … RUN_FINISHED
 *     → SNAPSHOT{runActive:true} … DELTA[replace /runActive false] RUN_FINISHED
 */
import { EventType, type AGUIEvent, type JsonPatchOperation } from "@ag-ui/core";
import { defer, type OperatorFunction } from "rxjs";
import { emitEach } from "./emit-each.js";
import { topLevelPatch } from "./to-state-events.js";

type Status = Record<string, unknown>;

const isEvent = (item: unknown): item is AGUIEvent => typeof item === "object" && item !== null && "type" in item;

/** A top-level patch, as `toStateEvents` writes them; `undefined` when it holds another kind of operation. */
function patched(status: Status, delta: readonly JsonPatchOperation[]): Status | undefined {
  const next = { ...status };
  for (const op of delta) {
    const key = op.path.slice(1).replaceAll("~1", "/").replaceAll("~0", "~");
    if (!op.path.startsWith("/") || op.path.indexOf("/", 1) !== -1) return undefined;
    if (op.op === "remove") delete next[key];
    else if (op.op === "add" || op.op === "replace") next[key] = op.value;
    else return undefined;
  }
  return next;
}

export function settleStatus<S extends object, T>(reduce: (status: S, end: AGUIEvent) => S): OperatorFunction<T, T | AGUIEvent> {
  return (source) =>
    defer(() => {
      let shown: Status | undefined;
      return source.pipe(
        emitEach((item: T): Array<T | AGUIEvent> => {
          if (!isEvent(item)) return [item];
          if (item.type === EventType.STATE_SNAPSHOT) shown = { ...(item.snapshot as Status) };
          else if (item.type === EventType.STATE_DELTA && shown !== undefined) shown = patched(shown, item.delta as JsonPatchOperation[]);
          else if ((item.type === EventType.RUN_FINISHED || item.type === EventType.RUN_ERROR) && shown !== undefined) {
            const delta = topLevelPatch(shown, reduce(shown as S, item) as Status);
            shown = undefined;
            if (delta.length > 0) {
              const settled: AGUIEvent = {
                type: EventType.STATE_DELTA,
                delta,
                ...(item.timestamp === undefined ? {} : { timestamp: item.timestamp }),
              };
              return [settled, item];
            }
          }
          return [item];
        }),
      );
    });
}
