/**
 * A client that attaches to an execution within its disconnect grace window
 * (R-SIB-7) claims that window: its task is not cancelled while the client
 * watches. When that client leaves, the window is held again, or, if the
 * client saw the task settle, the execution is ended for good. Observers
 * (the subscribe route) and attaching pages (the connect route) watch the
 * same way. The window may live in another instance (`disconnect-grace-redis.ts`):
 * the claim is then answered later, and a client gone by then gives it back.
 */
import { EventType } from "@ag-ui/core";
import { finalize, Observable, tap, type Subscription } from "rxjs";
import { errorFields, type Logger } from "../log.js";
import type { SseItem } from "../run-pipeline.js";
import { HEARTBEAT } from "../../operators/merge-heartbeat.js";
import type { DisconnectGrace } from "./disconnect-grace.js";

export interface WatchedExecution {
  threadId: string;
  executionId: string;
  grace: DisconnectGrace;
  endExecution: (threadId: string, executionId: string) => Promise<void>;
  log: Logger;
}

/** `events$` as is, or, when it claims the execution's grace window, with the window given back as it ends. */
export function watchWithinGrace(events$: Observable<SseItem>, watched: WatchedExecution): Observable<SseItem> {
  const { executionId, grace } = watched;
  return new Observable<SseItem>((subscriber) => {
    let watching: Subscription | undefined;
    let left = false;
    const watch = (claimed: boolean) => {
      if (left) {
        if (claimed) grace.unclaim(executionId, false);
        return;
      }
      watching = (claimed ? givenBackAtTheEnd(events$, watched) : events$).subscribe(subscriber);
    };
    const claim = grace.claim(executionId);
    if (typeof claim === "boolean") watch(claim);
    else claim.then(watch, (error: unknown) => subscriber.error(error));
    return () => {
      left = true;
      watching?.unsubscribe();
    };
  });
}

function givenBackAtTheEnd(events$: Observable<SseItem>, { threadId, executionId, grace, endExecution, log }: WatchedExecution) {
  let settled = false;
  return events$.pipe(
    // A pause seen only by a watcher was never stored, so nobody could answer it: that is no settled end.
    tap(
      (item) =>
        (settled ||=
          item !== HEARTBEAT &&
          ((item.type === EventType.RUN_FINISHED && item.outcome?.type !== "interrupt") || item.type === EventType.RUN_ERROR)),
    ),
    finalize(() => {
      grace.unclaim(executionId, settled);
      if (settled)
        void endExecution(threadId, executionId).catch((error: unknown) =>
          log.warn(errorFields(error), "ending the execution a watching client saw settle failed"),
        );
    }),
  );
}
