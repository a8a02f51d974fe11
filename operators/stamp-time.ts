/**
 * Gives each AG-UI event its `timestamp` (whole milliseconds since the
 * epoch, as the 1.0 schema requires) from the run's clock, unless it
 * already has one. One read of the clock and one copy per event: the event
 * an earlier stage made is not changed in place, since a stage may hand the
 * same object to more than one run (a constant opening, a cached error).
 *
 *   a b  (clock 5, then 6)  →  a{timestamp 5} b{timestamp 6}
 */
import type { AGUIEvent } from "@ag-ui/core";
import { map, type MonoTypeOperatorFunction } from "rxjs";

export function stampTime(now: () => number): MonoTypeOperatorFunction<AGUIEvent> {
  return map((event) => (event.timestamp === undefined ? ({ ...event, timestamp: Math.trunc(now()) } as AGUIEvent) : event));
}
