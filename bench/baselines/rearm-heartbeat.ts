/**
 * `mergeHeartbeat` as it was before the bench (commit 93274b5): every item
 * unsubscribes the timer and schedules a new one (clearInterval +
 * setInterval). Kept only so `npm run bench` can show the before/after.
 */
import { Observable, asyncScheduler, type OperatorFunction, type SchedulerLike, type Subscription } from "rxjs";
import { HEARTBEAT, type Heartbeat } from "../../operators/merge-heartbeat.js";

export function rearmingHeartbeat<T>(periodMs: number, scheduler: SchedulerLike = asyncScheduler): OperatorFunction<T, T | Heartbeat> {
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
