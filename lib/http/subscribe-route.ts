/**
 * `POST /{executionId}/subscribe` under `/extensions/iac-code/v1/executions`
 * (contract §10): read-only observation of a running or paused execution.
 * The body (`threadId`, and optionally `runId`, `rosInvocationId`,
 * `afterSequence`) is validated by `schemas/subscribe-request.schema.json`.
 */
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import express, { type RequestHandler } from "express";
import type { DisconnectGrace } from "../threads/disconnect-grace.js";
import { watchWithinGrace } from "../threads/watch-within-grace.js";
import { AguiError } from "../errors.js";
import { resolveLanguage } from "../i18n/index.js";
import { errorFields } from "../log.js";
import { SCHEMAS_DIR } from "../paths.js";
import type { RunA2A } from "../a2a/client.js";
import type { ThreadStore } from "../state/thread-store.js";
import { loadThread } from "../threads/load-thread.js";
import { observeExecution } from "../threads/observe.js";
import type { ThreadStatusHub } from "../threads/status-hub.js";
import { jsonBody, MAX_CONTROL_BODY_BYTES } from "./json-body.js";
import { noteRequestIds, requestLog } from "./request-log.js";
import { FlowGate, readThrough } from "../runs/flow-gate.js";
import { negotiateEncoding } from "./event-encoding.js";
import { pipeToSse, type SseSinkOptions } from "./sse-sink.js";

interface ObserveBody {
  threadId: string;
  runId?: string;
  rosInvocationId?: string;
  afterSequence?: number;
}

const observeSchema = JSON.parse(readFileSync(path.join(SCHEMAS_DIR, "subscribe-request.schema.json"), "utf8")) as {
  properties: { threadId: object };
};
const ajv = new Ajv2020({ strict: true });
const validateBody = ajv.compile<ObserveBody>(observeSchema);
/** A thread id as every route takes one (the schema's rule): a client attaching names its thread in the path. */
export const isThreadId = ajv.compile<string>(observeSchema.properties.threadId);

export interface SubscribeRouteDependencies {
  store: ThreadStore;
  a2a: RunA2A;
  hub: ThreadStatusHub;
  grace: DisconnectGrace;
  endExecution: (threadId: string, executionId: string) => Promise<void>;
  heartbeatMs: number;
  /** An observer that takes nothing for this long while bytes wait for it counts as gone (see `sse-sink.ts`). */
  clientStallS: number;
  sse?: Pick<SseSinkOptions, "highWaterMark" | "onPressure" | "track">;
}

export function subscribeRoute({
  store,
  a2a,
  hub,
  grace,
  endExecution,
  heartbeatMs,
  clientStallS,
  sse = {},
}: SubscribeRouteDependencies): express.Router {
  const router = express.Router();
  const subscribe: RequestHandler<{ executionId: string }> = async (req, res) => {
    if (!validateBody(req.body)) throw new AguiError("INVALID_INPUT", { reason: "observeBody" });
    const body = req.body;
    noteRequestIds(res, { threadId: body.threadId, executionId: req.params.executionId });
    // The observer's own records bind its ids (see `observe.ts`); these are the route's.
    const log = requestLog(res).child({ threadId: body.threadId, executionId: req.params.executionId });
    const state = await loadThread(store, body.threadId);
    if (!state) throw new AguiError("EXECUTION_NOT_FOUND", { reason: "checkpoint" });
    const { execution } = state;
    const known =
      execution.executionId === req.params.executionId &&
      (body.rosInvocationId === undefined || body.rosInvocationId === execution.rosInvocationId) &&
      (body.runId === undefined || body.runId in state.runDigests);
    if (!known) throw new AguiError("OBSERVATION_CONFLICT");
    if (execution.taskId === null) throw new AguiError("EXECUTION_NOT_FOUND", { reason: "checkpoint" });

    // Each observer reads the kernel on its own connection, only as fast as it reads its own stream.
    const gate = new FlowGate();
    const observed$ = observeExecution(
      {
        state,
        runId: `observe-${randomUUID()}`,
        afterSequence: body.afterSequence ?? execution.pipelineSequence,
        language: resolveLanguage(undefined, req.get("accept-language")),
      },
      { a2a: readThrough(gate, a2a), hub, heartbeatMs, log: requestLog(res) },
    );
    // A client back within its grace window: its task is not cancelled while it watches (R-SIB-7).
    const { executionId } = execution;
    const run$ = watchWithinGrace(observed$, { threadId: body.threadId, executionId, grace, endExecution, log });
    const failedOutside = (error: unknown) =>
      log.error({ ...errorFields(error), code: "INTERNAL_ERROR" }, "the observer failed outside its pipeline");
    pipeToSse(run$, res, failedOutside, {
      ...sse,
      encoding: negotiateEncoding(req),
      gate,
      stallMs: clientStallS * 1000,
      onSlowClient: (unsent) =>
        log.info({ unsentBytes: unsent }, `dropped an observer that took nothing for ${clientStallS} s, as if it had left`),
    });
  };
  router.post("/:executionId/subscribe", ...jsonBody(MAX_CONTROL_BODY_BYTES), subscribe);
  return router;
}
