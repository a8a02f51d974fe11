/**
 * `POST /{executionId}/cancel` under `/extensions/iac-code/v1/executions`
 * (R-HTTP-3): the body is validated by `schemas/cancel-request.schema.json`,
 * the cancel is `Runs.cancel`, and the answer names the execution and what
 * became of it (`cancelled`, or `already_terminal`).
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import express, { type RequestHandler } from "express";
import { AguiError } from "../errors.js";
import { SCHEMAS_DIR } from "../paths.js";
import type { Runs } from "../runs/runs.js";
import { jsonBody, MAX_CONTROL_BODY_BYTES } from "./json-body.js";

const validateBody = new Ajv2020({ strict: true }).compile<{ threadId: string; rosInvocationId: string }>(
  JSON.parse(readFileSync(path.join(SCHEMAS_DIR, "cancel-request.schema.json"), "utf8")),
);

const isObject = (body: unknown) => typeof body === "object" && body !== null && !Array.isArray(body);

export function cancelRoute(runs: Pick<Runs, "cancel">): express.Router {
  const router = express.Router();
  const cancel: RequestHandler<{ executionId: string }> = async (req, res) => {
    if (!validateBody(req.body)) throw new AguiError("INVALID_INPUT", { reason: isObject(req.body) ? "cancelBody" : "cancelNotObject" });
    const status = await runs.cancel(req.params.executionId, req.body);
    res.json({ executionId: req.params.executionId, status });
  };
  router.post("/:executionId/cancel", ...jsonBody(MAX_CONTROL_BODY_BYTES), cancel);
  return router;
}
