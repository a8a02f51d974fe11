/**
 * Merges a heartbeat into a quiet stream (R-SSE-2): after `periodMs` with no
 * item, emits `HEARTBEAT` (the sink writes it as the SSE comment
 * `: heartbeat`), and again every `periodMs` while the quiet lasts. Any
 * item restarts the quiet period. The heartbeat is not an AG-UI event, so
 * it never reaches a client's event handlers.
 *
 *   periodMs = 3:  a-------b|  → a--H--Hb|
 *
 * An item only notes the time (`scheduler.now()`); it never touches the
 * timer. The one timer of a subscription wakes at the earliest moment a
 * heartbeat could be due and looks: if an item came meanwhile, it sleeps
 * again until `periodMs` after that item, else it beats. A busy stream thus
 * costs one clock read per item and one wake-up per period, not a
 * clearInterval + setInterval per item (measured in `bench/`, see
 * `bench/README.md`).
 */
import { asyncScheduler, type OperatorFunction, type SchedulerLike } from "rxjs";
import { operate, operatorOf } from "../lib/rx/operate.js";

export const HEARTBEAT = Symbol("heartbeat");
export type Heartbeat = typeof HEARTBEAT;

export function mergeHeartbeat<T>(periodMs: number, scheduler: SchedulerLike = asyncScheduler): OperatorFunction<T, T | Heartbeat> {
  return operatorOf<T, T | Heartbeat>((destination) => {
    /** When the stream last said something: an item, a heartbeat, or the subscription itself. */
    let lastActivity = scheduler.now();
    const timer = scheduler.schedule(function wake() {
      const quietFor = scheduler.now() - lastActivity;
      if (quietFor >= periodMs) {
        destination.next(HEARTBEAT);
        lastActivity = scheduler.now();
        this.schedule(undefined, periodMs);
      } else {
        this.schedule(undefined, periodMs - quietFor);
      }
    }, periodMs);
    return operate<T, T | Heartbeat>({
      destination,
      next: (item) => {
        lastActivity = scheduler.now();
        destination.next(item);
      },
      finalize: () => timer.unsubscribe(),
    });
  });
}
