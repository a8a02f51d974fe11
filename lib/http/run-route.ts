/**
 * `POST /` (R-HTTP): a RunAgentInput in, the run's AG-UI events out, as SSE
 * or protobuf as the client's Accept asks (`event-encoding.ts`). The route
 * refuses a run while the service drains, before reading its body; the rest
 * is `Runs.start` (validation, admission, the run's pipeline). Refusals
 * before the stream starts are answered as errors; once it has started,
 * failures are `RUN_ERROR` events.
 */
import express, { type RequestHandler } from "express";
import type { ServiceMetrics } from "../metrics/service-metrics.js";
import { FlowGate } from "../runs/flow-gate.js";
import type { Runs } from "../runs/runs.js";
import { jsonBody, MAX_RUN_BODY_BYTES } from "./json-body.js";
import { httpRunClient, streamToClient, type StreamSettings } from "./stream-client.js";

export function runRoute(runs: Runs, settings: Omit<StreamSettings, "who">, metrics?: ServiceMetrics): express.Router {
  const sse = metrics ? { ...settings.sse, track: () => metrics.streamOpened("run") } : settings.sse;
  const refuseWhileDraining: RequestHandler = (_req, _res, next) => {
    runs.registry.refuseIfDraining();
    next();
  };
  const startRun: RequestHandler = async (req, res) => {
    // The run's kernel streams are read only while its client keeps up (see `runs/flow-gate.ts`).
    const gate = new FlowGate();
    const events$ = await runs.start(req.body, httpRunClient(req, res, gate));
    // The request outlives the run's start by as long as its stream is open: what the client sent (the whole
    // conversation, with CopilotKit or HttpAgent) was the run's to read as it started, and is not kept with the
    // request. A refusal before (thrown above) still finds it there: its message speaks the body's language.
    req.body = undefined;
    streamToClient(events$, req, res, gate, { ...settings, sse, who: "run" });
  };
  const router = express.Router();
  router.post("/", refuseWhileDraining, ...jsonBody(MAX_RUN_BODY_BYTES), startRun);
  return router;
}
