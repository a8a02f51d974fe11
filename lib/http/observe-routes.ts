/**
 * The observer routes: one observer path (`Runs.observe`, see
 * `runs/observe-target.ts`) with two addressings.
 *
 * - `POST /extensions/iac-code/v1/threads/{threadId}/connect`: by thread
 *   alone, for a page after a reload (CopilotKit-style `connectAgent()`). The
 *   body may be `{}` or what an agent's `connect` posts (a RunAgentInput);
 *   only its `threadId`, when given, is read, and it must be the path's.
 * - `POST /extensions/iac-code/v1/executions/{executionId}/subscribe`
 *   (contract §10): by execution; the body (`threadId`, and optionally
 *   `runId`, `rosInvocationId`, `afterSequence`) is validated by
 *   `schemas/subscribe-request.schema.json`.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import express, { type ErrorRequestHandler, type Request, type RequestHandler, type Response } from "express";
import { AguiError } from "../errors.js";
import { isJsonObject } from "../model/json.js";
import { SCHEMAS_DIR } from "../paths.js";
import { FlowGate } from "../runs/flow-gate.js";
import type { ObserveTarget } from "../runs/observe-target.js";
import type { Runs } from "../runs/runs.js";
import { jsonBody, MAX_CONTROL_BODY_BYTES, MAX_RUN_BODY_BYTES } from "./json-body.js";
import { httpRunClient, streamToClient, type StreamSettings } from "./stream-client.js";

const observeSchema = JSON.parse(readFileSync(path.join(SCHEMAS_DIR, "subscribe-request.schema.json"), "utf8")) as {
  properties: { threadId: object };
};
const ajv = new Ajv2020({ strict: true });
const validateSubscribeBody = ajv.compile<Omit<ObserveTarget, "executionId">>(observeSchema);
/** A thread id as every route takes one (the schema's rule): a client attaching names its thread in the path. */
const isThreadId = ajv.compile<string>(observeSchema.properties.threadId);

const invalidBody = (cause?: unknown) => new AguiError("INVALID_INPUT", { reason: "observeBody" }, { cause });

/** The threads router (connect) and the executions router (subscribe), both streaming through `runs`. */
export function observeRoutes(runs: Runs, settings: Omit<StreamSettings, "who">): { threads: express.Router; executions: express.Router } {
  const observe = async <P extends Record<string, string>>(target: ObserveTarget, req: Request<P>, res: Response) => {
    // Each observer reads the kernel on its own connection, only as fast as it reads its own stream.
    const gate = new FlowGate();
    const events$ = await runs.observe(target, httpRunClient(req, res, gate));
    streamToClient(events$, req, res, gate, { ...settings, who: "observer" });
  };

  const threads = express.Router();
  const connect: RequestHandler<{ threadId: string }> = async (req, res) => {
    const { threadId } = req.params;
    const body: unknown = req.body;
    if (!isThreadId(threadId) || !isJsonObject(body) || (body.threadId !== undefined && body.threadId !== threadId)) throw invalidBody();
    await observe({ threadId }, req, res);
  };
  threads.post("/:threadId/connect", ...jsonBody(MAX_RUN_BODY_BYTES), connect);
  // A path whose thread id is no valid percent-encoding (a lone surrogate, a cut escape) names no thread: the router
  // fails to decode it before the handler runs.
  const undecodable: ErrorRequestHandler = (error: unknown, _req, _res, next) =>
    next(error instanceof URIError ? invalidBody(error) : error);
  threads.use(undecodable);

  const executions = express.Router();
  const subscribe: RequestHandler<{ executionId: string }> = async (req, res) => {
    const body: unknown = req.body;
    if (!validateSubscribeBody(body)) throw invalidBody();
    await observe({ ...body, executionId: req.params.executionId }, req, res);
  };
  executions.post("/:executionId/subscribe", ...jsonBody(MAX_CONTROL_BODY_BYTES), subscribe);
  return { threads, executions };
}
