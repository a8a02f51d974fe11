/**
 * `POST /{threadId}/connect` under `/extensions/iac-code/v1/threads`: a
 * client attaches to its thread with nothing but the thread id — a page
 * after a reload, CopilotKit-style `connectAgent()` — and gets one AG-UI
 * stream: RUN_STARTED, the session event, the thread status, the
 * conversation as MESSAGES_SNAPSHOT (read from the kernel, see
 * `a2a/history-messages.ts`), then the run in progress to its end, or a
 * RUN_FINISHED whose outcome names the interrupts waiting to be answered.
 * It is an observer stream (`threads/observe.ts`): it takes no lease and
 * cancels nothing, and a client back within its disconnect grace window
 * keeps its task alive while it watches (R-SIB-7).
 *
 * The body may be `{}` or what an agent's `connect` posts (a
 * RunAgentInput); only its `threadId`, when given, is read, and it must be
 * the path's. A thread the service does not know attaches to an empty
 * conversation: a page may connect before its first message.
 */
import { randomUUID } from "node:crypto";
import { EventType, type AGUIEvent } from "@ag-ui/core";
import express, { type ErrorRequestHandler, type RequestHandler } from "express";
import { from, type Observable } from "rxjs";
import { messagesSnapshot } from "../a2a/history-messages.js";
import { AguiError } from "../errors.js";
import { errorFields } from "../log.js";
import { isJsonObject } from "../model/json.js";
import { initialThreadStatus } from "../model/thread-status.js";
import type { SseItem } from "../run-pipeline.js";
import { watchWithinGrace } from "../threads/watch-within-grace.js";
import { loadThread } from "../threads/load-thread.js";
import { observeExecution } from "../threads/observe.js";
import { negotiateEncoding } from "./event-encoding.js";
import { FlowGate, readThrough } from "../runs/flow-gate.js";
import { isThreadId, type SubscribeRouteDependencies } from "./subscribe-route.js";
import { jsonBody, MAX_RUN_BODY_BYTES } from "./json-body.js";
import { noteRequestIds, requestLog } from "./request-log.js";
import { requestLanguage } from "./request-language.js";
import { pipeToSse } from "./sse-sink.js";

/** What an attached client needs is what an observer needs (see `subscribe-route.ts`). */
export type ConnectRouteDependencies = SubscribeRouteDependencies;

/** A thread with no state: the stream of an empty conversation, at rest. */
function unknownThread(threadId: string, runId: string): Observable<AGUIEvent> {
  const timestamp = Date.now();
  return from<AGUIEvent[]>([
    { type: EventType.RUN_STARTED, threadId, runId, timestamp },
    { type: EventType.STATE_SNAPSHOT, snapshot: initialThreadStatus(threadId), timestamp },
    { ...messagesSnapshot([]), timestamp },
    { type: EventType.RUN_FINISHED, threadId, runId, outcome: { type: "success" }, timestamp },
  ]);
}

export function connectRoute({
  store,
  a2a,
  hub,
  grace,
  endExecution,
  heartbeatMs,
  clientStallS,
  sse = {},
}: ConnectRouteDependencies): express.Router {
  const router = express.Router();

  const connect: RequestHandler<{ threadId: string }> = async (req, res) => {
    const { threadId } = req.params;
    const body: unknown = req.body;
    if (!isThreadId(threadId) || !isJsonObject(body) || (body.threadId !== undefined && body.threadId !== threadId)) {
      throw new AguiError("INVALID_INPUT", { reason: "observeBody" });
    }
    noteRequestIds(res, { threadId });
    const log = requestLog(res).child({ threadId });
    const state = await loadThread(store, threadId);
    const runId = `connect-${randomUUID()}`;
    // Each attached client reads the kernel on its own connection, only as fast as it reads its own stream.
    const gate = new FlowGate();
    let events$: Observable<SseItem>;
    if (state === undefined) events$ = unknownThread(threadId, runId);
    else {
      const { execution } = state;
      events$ = observeExecution(
        { state, runId, afterSequence: execution.pipelineSequence, language: requestLanguage(req) },
        { a2a: readThrough(gate, a2a), hub, heartbeatMs, log: requestLog(res) },
      );
      // A client back within its grace window: its task is not cancelled while it watches (R-SIB-7).
      if (execution.taskId !== null)
        events$ = watchWithinGrace(events$, { threadId, executionId: execution.executionId, grace, endExecution, log });
    }
    pipeToSse(
      events$,
      res,
      (error) => log.error({ ...errorFields(error), code: "INTERNAL_ERROR" }, "the attach stream failed outside its pipeline"),
      {
        ...sse,
        encoding: negotiateEncoding(req),
        gate,
        stallMs: clientStallS * 1000,
        onSlowClient: (unsent) =>
          log.info({ unsentBytes: unsent }, `dropped an attached client that took nothing for ${clientStallS} s, as if it had left`),
      },
    );
  };
  router.post("/:threadId/connect", ...jsonBody(MAX_RUN_BODY_BYTES), connect);
  // A path whose thread id is no valid percent-encoding (a lone surrogate, a cut escape) names no thread: the router
  // fails to decode it before the handler runs.
  const undecodable: ErrorRequestHandler = (error: unknown, _req, _res, next) =>
    next(error instanceof URIError ? new AguiError("INVALID_INPUT", { reason: "observeBody" }, { cause: error }) : error);
  router.use(undecodable);
  return router;
}
