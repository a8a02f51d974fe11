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
import { AguiError } from "../errors.js";
import { resolveLanguage } from "../i18n/index.js";
import { SCHEMAS_DIR } from "../paths.js";
import type { RunA2A } from "../run.js";
import { StateUnavailableError, type ThreadStore } from "../state/thread-store.js";
import { observeExecution } from "../threads/observe.js";
import type { ThreadStatusHub } from "../threads/status-hub.js";
import { jsonBody, MAX_CONTROL_BODY_BYTES } from "./json-body.js";
import { pipeToSse } from "./sse-sink.js";

interface ObserveBody {
  threadId: string;
  runId?: string;
  rosInvocationId?: string;
  afterSequence?: number;
}

const validateBody = new Ajv2020({ strict: true }).compile<ObserveBody>(
  JSON.parse(readFileSync(path.join(SCHEMAS_DIR, "subscribe-request.schema.json"), "utf8")),
);

export interface SubscribeRouteDependencies {
  store: ThreadStore;
  a2a: RunA2A;
  hub: ThreadStatusHub;
  heartbeatMs: number;
  log?: (message: string, error?: unknown) => void;
}

export function subscribeRoute({ store, a2a, hub, heartbeatMs, log = () => {} }: SubscribeRouteDependencies): express.Router {
  const router = express.Router();
  const subscribe: RequestHandler<{ executionId: string }> = async (req, res) => {
    if (!validateBody(req.body)) throw new AguiError("INVALID_INPUT", { reason: "observeBody" });
    const body = req.body;
    const state = await store.load(body.threadId).catch((error: unknown) => {
      throw error instanceof StateUnavailableError ? new AguiError("STATE_UNAVAILABLE", {}, { cause: error }) : error;
    });
    if (!state) throw new AguiError("EXECUTION_NOT_FOUND", { reason: "checkpoint" });
    const { execution } = state;
    const known =
      execution.executionId === req.params.executionId &&
      (body.rosInvocationId === undefined || body.rosInvocationId === execution.rosInvocationId) &&
      (body.runId === undefined || body.runId in state.runDigests);
    if (!known) throw new AguiError("OBSERVATION_CONFLICT");
    if (execution.taskId === null) throw new AguiError("EXECUTION_NOT_FOUND", { reason: "checkpoint" });

    const run$ = observeExecution(
      { state, runId: `observe-${randomUUID()}`, afterSequence: body.afterSequence ?? execution.pipelineSequence, language: resolveLanguage(undefined, req.get("accept-language")) },
      { a2a, hub, heartbeatMs },
    );
    pipeToSse(run$, res, (error) => log(`observer of ${req.params.executionId} failed outside the pipeline`, error));
  };
  router.post("/:executionId/subscribe", ...jsonBody(MAX_CONTROL_BODY_BYTES), subscribe);
  return router;
}
