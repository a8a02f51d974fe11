/**
 * Session handoff (wire contract §10): `GET|POST /iac-code/handoff/<op>`
 * for `capabilities` (GET, no body), `prepare`, `restore`, `authorize`,
 * `discover` and `apply-input` (POST). Each body must name the AG-UI
 * protocol where its op keeps the identity; the request then goes to the
 * kernel's route of the same name as it came, and the kernel's JSON comes
 * back as it is. A kernel without handoff (404) is answered for it
 * (`supported: false` / `UNSUPPORTED`); a kernel that could not be asked,
 * or gave no usable answer, is `UNKNOWN`, since whether it applied the
 * request cannot be told.
 *
 * `apply-input` never lets the kernel deliver the pending input itself
 * (`skipDelivery`): when the kernel says the input must come through AG-UI,
 * it is run here as a run of its own (`pendingRunInput`), through the same
 * validation and admission as `POST /`, drained, and the kernel asked once
 * more.
 */
import { createHash } from "node:crypto";
import express, { type Request, type RequestHandler, type Response } from "express";
import type { A2AClient } from "../a2a/client.js";
import { AguiError } from "../errors.js";
import { errorFields } from "../log.js";
import { jsonBody, MAX_CONTROL_BODY_BYTES, MAX_RUN_BODY_BYTES } from "./json-body.js";
import { requestLog } from "./request-log.js";

export const HANDOFF_VERSION = "session-handoff-v1";
export const HANDOFF_OPS = ["capabilities", "prepare", "restore", "authorize", "discover", "apply-input"] as const;
type HandoffOp = (typeof HANDOFF_OPS)[number];

const UNCONFIRMED = { status: "UNKNOWN", reason: "agui_handoff_upstream_unconfirmed" } as const;

export interface HandoffRouteDependencies {
  a2a: Pick<A2AClient, "handoff">;
  /**
   * Runs a RunAgentInput (unvalidated) as `POST /` would, to its end, its events read by nobody; rejects when it is
   * not admitted. Tied to the request's connection: `left` when that closed first (the run was left as a stream's is).
   */
  runInternally(body: unknown, req: Request, res: Response): Promise<"ended" | "left">;
}

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);

const invalidRequest = (cause?: unknown) => new AguiError("INVALID_INPUT", { reason: "handoffRequest" }, { cause });

/** Where each op keeps the identity whose `protocol` must be `agui`. */
function protocolOf(op: Exclude<HandoffOp, "capabilities">, payload: Json): unknown {
  if (op === "prepare") return payload.protocol;
  const holder = op === "discover" ? payload.request : payload.receipt;
  return isObject(holder) ? holder.protocol : undefined;
}

export function handoffRoute({ a2a, runInternally }: HandoffRouteDependencies): express.Router {
  const router = express.Router();

  /** The kernel's answer, or the adapter's on its behalf when it has no handoff or gave no answer. */
  const ask = async (res: Response, op: HandoffOp, body?: Json): Promise<unknown> => {
    try {
      const answer = await a2a.handoff(op, body);
      if (answer !== undefined) return answer;
      return op === "capabilities" ? { version: HANDOFF_VERSION, supported: false } : { status: "UNSUPPORTED" };
    } catch (error) {
      requestLog(res).warn({ ...errorFields(error), op }, "the kernel's handoff route gave no answer");
      return UNCONFIRMED;
    }
  };

  router.get("/capabilities", async (_req, res) => {
    res.json(await ask(res, "capabilities"));
  });

  const proxy: RequestHandler<{ op: string }> = async (req, res, next) => {
    const op = req.params.op as HandoffOp;
    if (!HANDOFF_OPS.includes(op) || op === "capabilities") return next();
    const payload: unknown = req.body;
    if (!isObject(payload)) throw invalidRequest();
    if (protocolOf(op, payload) !== "agui") throw new AguiError("INVALID_INPUT", { reason: "handoffProtocol" });
    if (op !== "apply-input") return void res.json(await ask(res, op, payload));

    const body = { ...payload, skipDelivery: true };
    const first = await ask(res, op, body);
    if (!needsDelivery(first)) return void res.json(first);
    const input = pendingRunInput(body);
    try {
      // Nobody is left to answer, and the kernel need not be asked again for them.
      if ((await runInternally(input, req, res)) === "left") return;
    } catch (error) {
      if (error instanceof AguiError) throw error;
      requestLog(res).warn(errorFields(error), "the handoff's pending input could not be run");
      return void res.json(UNCONFIRMED);
    }
    res.json(await ask(res, op, body));
  };
  // apply-input carries the pending input, images included, so it may be as large as a run's body.
  router.post("/apply-input", ...jsonBody(MAX_RUN_BODY_BYTES), proxy);
  router.post("/:op", ...jsonBody(MAX_CONTROL_BODY_BYTES), proxy);
  return router;
}

function needsDelivery(answer: unknown): boolean {
  return isObject(answer) && answer.status === "NOT_READY" && answer.reason === "agui_input_delivery_required";
}

/**
 * The RunAgentInput that delivers an `apply-input`'s pending input: the
 * thread and invocation of the receipt's AG-UI identity, the guidance id as
 * run id (and message id), the kernel-side caller metadata back in
 * `forwardedProps.iacCode`, and the handoff's target as the execution fence's
 * owner. The pending input is the client's original RunAgentInput when the
 * kernel kept it, else its text and images (each checked against the digest
 * and size the kernel recorded for it). An input that answers interrupts is a
 * resume; any other is a guidance run in pipeline mode, a new turn otherwise.
 */
export function pendingRunInput(payload: Json): Json {
  const receipt = payload.receipt;
  const pending = payload.pendingInput;
  if (!isObject(receipt) || !isObject(pending) || !isObject(receipt.aguiIdentity)) throw invalidRequest();
  const identity = receipt.aguiIdentity;
  const guidanceId = receipt.guidanceId;
  if (typeof identity.threadId !== "string" || typeof guidanceId !== "string") throw invalidRequest();
  const caller = isObject(payload.callerMetadata) && isObject(payload.callerMetadata.iac_code) ? payload.callerMetadata.iac_code : {};
  const iacCode: Json = {
    schemaVersion: 1,
    rosInvocationId: identity.rosInvocationId,
    cwd: receipt.cwd,
    userId: receipt.userId,
    runMode: receipt.mode,
    guidanceId,
    inputDigest: payload.inputDigest,
    executionFence: { version: HANDOFF_VERSION, owner: payload.target },
    model: caller.iac_code_model,
    llmApiKey: caller.iac_code_api_key,
    llmHeaders: caller.llm_headers,
    thinking: caller.thinking,
    pipelineName: caller.pipeline_name,
    preferredLanguage: caller.preferredLanguage,
  };
  const cloud = withoutAbsent({
    accessKeyId: caller.alibaba_cloud_access_key_id,
    accessKeySecret: caller.alibaba_cloud_access_key_secret,
    securityToken: caller.alibaba_cloud_security_token,
    regionId: caller.alibaba_cloud_region_id,
  });
  if (Object.keys(cloud).length > 0) iacCode.alibabaCloud = cloud;

  const kept = isObject(pending.agui_raw_input) ? pending.agui_raw_input.run_input : undefined;
  const envelope: Json = isObject(kept)
    ? { ...kept }
    : { messages: pendingMessages(pending, guidanceId), state: {}, tools: [], context: [] };
  const interruptAnswers = pending.interrupt_responses;
  const resume = Array.isArray(interruptAnswers) && interruptAnswers.length > 0 ? interruptAnswers : envelope.resume;
  const isResume = Array.isArray(resume) ? resume.length > 0 : resume !== undefined && resume !== null;
  // Guidance steers a running pipeline; outside one it would be refused, and the pending input is a new turn.
  iacCode.activeGuidance = !isResume && receipt.mode === "pipeline";
  const input: Json = {
    ...envelope,
    threadId: identity.threadId,
    runId: guidanceId,
    forwardedProps: { iacCode: withoutAbsent(iacCode) },
  };
  if (isResume) input.resume = resume;
  else delete input.resume;
  return input;
}

function pendingMessages(pending: Json, guidanceId: string): Json[] {
  const content: Json[] = typeof pending.query === "string" && pending.query !== "" ? [{ type: "text", text: pending.query }] : [];
  const descriptors =
    isObject(pending.image_attachments) && Array.isArray(pending.image_attachments.items) ? pending.image_attachments.items : [];
  const parts = Array.isArray(pending.image_parts) && pending.image_parts.length > 0 ? pending.image_parts : descriptors;
  if (parts.length !== descriptors.length) throw invalidRequest();
  descriptors.forEach((descriptor: unknown, index) => {
    const part: unknown = parts[index];
    if (!isObject(descriptor) || !isObject(part) || typeof part.bytes_base64 !== "string") throw invalidRequest();
    const bytes = Buffer.from(part.bytes_base64, "base64");
    const sha256 = createHash("sha256").update(bytes).digest("hex");
    if (bytes.toString("base64") !== part.bytes_base64 || bytes.length !== descriptor.size_bytes || sha256 !== descriptor.sha256) {
      throw invalidRequest();
    }
    content.push({
      type: "image",
      source: { type: "data", value: part.bytes_base64, mimeType: descriptor.media_type },
      metadata: { filename: descriptor.filename },
    });
  });
  return content.length > 0 ? [{ id: guidanceId, role: "user", content }] : [];
}

function withoutAbsent(record: Json): Json {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined && value !== null));
}
