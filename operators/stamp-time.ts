/**
 * Gives each AG-UI event its `timestamp` (whole milliseconds since the
 * epoch, as the 1.0 schema requires) from the run's clock, unless it
 * already has one. Each event reaching this stage was made for this run by
 * an earlier stage, so it is stamped in place: a copy per event was a
 * tenth of the chain's time. An event that cannot be changed (frozen, as a
 * shared constant would be) is copied instead.
 *
 *   a b  (clock 5, then 6)  →  a{timestamp 5} b{timestamp 6}
 */
import type { AGUIEvent } from "@ag-ui/core";
import type { MonoTypeOperatorFunction } from "rxjs";
import { emitEach } from "./emit-each.js";

export function stampTime(now: () => number): MonoTypeOperatorFunction<AGUIEvent> {
  // `emitEach`, not `map`: one subscriber with no closures, which every open stream keeps while it lasts.
  return emitEach((event: AGUIEvent): AGUIEvent => {
    if (event.timestamp !== undefined) return event;
    const timestamp = Math.trunc(now());
    if (!Object.isExtensible(event)) return { ...event, timestamp } as AGUIEvent;
    event.timestamp = timestamp;
    return event;
  });
}
