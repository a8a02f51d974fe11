/**
 * The Express end of a run: writes each AG-UI event as one `data: <json>`
 * record and each heartbeat as the comment `: heartbeat`, LF-only framing
 * (the AG-UI client's parser breaks on CRLF). A client that goes away
 * unsubscribes the run, which cancels the upstream task (see `onAbandon`).
 */
import type { Response } from "express";
import type { Observable } from "rxjs";
import { HEARTBEAT } from "../../operators/merge-heartbeat.js";
import type { SseItem } from "../run.js";

export const SSE_HEADERS = {
  "Content-Type": "text/event-stream; charset=utf-8",
  "Cache-Control": "no-cache, no-transform",
  Connection: "keep-alive",
  // Reverse proxies (nginx) would otherwise buffer the stream.
  "X-Accel-Buffering": "no",
} as const;

export const encodeSseItem = (item: SseItem): string =>
  item === HEARTBEAT ? ": heartbeat\n\n" : `data: ${JSON.stringify(item)}\n\n`;

export function pipeToSse(items$: Observable<SseItem>, res: Response, onError: (error: unknown) => void): void {
  res.writeHead(200, SSE_HEADERS);
  res.flushHeaders();
  const subscription = items$.subscribe({
    next: (item) => res.write(encodeSseItem(item)),
    error: (error: unknown) => {
      // The pipeline turns every failure into RUN_ERROR; reaching here is a bug, not a run outcome.
      onError(error);
      res.end();
    },
    complete: () => res.end(),
  });
  res.on("close", () => subscription.unsubscribe());
}
