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
import express, { type ErrorRequestHandler, type Request, type RequestHandler } from "express";
import { from, type Observable } from "rxjs";
import { messagesSnapshot } from "../a2a/history-messages.js";
import { AguiError } from "../errors.js";
import { resolveLanguage } from "../i18n/index.js";
import { errorFields } from "../log.js";
import { isJsonObject } from "../model/json.js";
import { initialThreadStatus } from "../model/thread-status.js";
import type { RunA2A } from "../run.js";
import type { SseItem } from "../run-pipeline.js";
import type { ThreadStore } from "../state/thread-store.js";
import type { DisconnectGrace } from "../threads/disconnect-grace.js";
import { watchWithinGrace } from "../threads/watch-within-grace.js";
import { loadThread } from "../threads/load-thread.js";
import { observeExecution } from "../threads/observe.js";
import type { ThreadStatusHub } from "../threads/status-hub.js";
import { negotiateEncoding } from "./event-encoding.js";
import { FlowGate, readThrough } from "./flow-gate.js";
import { jsonBody, MAX_RUN_BODY_BYTES } from "./json-body.js";
import { noteRequestIds, requestLog } from "./request-log.js";
import { pipeToSse, type SseSinkOptions } from "./sse-sink.js";

export interface ConnectRouteDependencies {
  store: ThreadStore;
  a2a: RunA2A;
  hub: ThreadStatusHub;
  grace: DisconnectGrace;
  endExecution: (threadId: string, executionId: string) => Promise<void>;
  heartbeatMs: number;
  /** An attached client that takes nothing for this long while bytes wait for it counts as gone (see `sse-sink.ts`). */
  clientStallS: number;
  sse?: Pick<SseSinkOptions, "highWaterMark" | "onPressure">;
}

/** An id as the run schema takes one: 1 to 256 characters of well-formed Unicode (a lone surrogate could name no thread file). */
const isThreadId = (value: string) => value.length >= 1 && value.length <= 256 && /^[^\uD800-\uDFFF]*$/u.test(value);

/** The body's own language, as a run's request carries it, else Accept-Language. */
function languageOf(req: Request): string {
  const body: unknown = req.body;
  const preferred = (body as { forwardedProps?: { iacCode?: { preferredLanguage?: unknown } } } | undefined)?.forwardedProps?.iacCode
    ?.preferredLanguage;
  return resolveLanguage(typeof preferred === "string" ? preferred : undefined, req.get("accept-language"));
}

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
        { state, runId, afterSequence: execution.pipelineSequence, language: languageOf(req) },
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
