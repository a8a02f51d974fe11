/**
 * Merges a heartbeat into a quiet stream (R-SSE-2): after `periodMs` with no
 * item, emits `HEARTBEAT` (the sink writes it as the SSE comment
 * `: heartbeat`), and again every `periodMs` while the quiet lasts. Any
 * item re-arms the timer. The heartbeat is not an AG-UI event, so it never
 * reaches a client's event handlers.
 *
 *   periodMs = 3:  a-------b|  → a--H--Hb|
 */
import { Observable, asyncScheduler, type OperatorFunction, type SchedulerLike, type Subscription } from "rxjs";

export const HEARTBEAT = Symbol("heartbeat");
export type Heartbeat = typeof HEARTBEAT;

export function mergeHeartbeat<T>(periodMs: number, scheduler: SchedulerLike = asyncScheduler): OperatorFunction<T, T | Heartbeat> {
  return (source) =>
    new Observable<T | Heartbeat>((subscriber) => {
      let timer: Subscription | undefined;
      const arm = () => {
        timer?.unsubscribe();
        timer = scheduler.schedule(function beat() {
          subscriber.next(HEARTBEAT);
          this.schedule(undefined, periodMs);
        }, periodMs);
      };
      arm();
      const subscription = source.subscribe({
        next: (item) => {
          subscriber.next(item);
          arm();
        },
        error: (error: unknown) => subscriber.error(error),
        complete: () => subscriber.complete(),
      });
      return () => {
        timer?.unsubscribe();
        subscription.unsubscribe();
      };
    });
}
