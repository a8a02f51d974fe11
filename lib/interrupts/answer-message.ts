/**
 * A validated answer → what the run sends the kernel (contract §5 "How each
 * answer reaches the kernel"). Pure: the run decides when to send it, and
 * records the answer as applied only once the kernel has accepted it.
 */
import type { A2aTextPart } from "../a2a/request-mapping.js";
import { AguiError } from "../errors.js";
import type { InputProjection, PendingInput } from "../state/thread-state.js";
import { deploymentOptions, parameterOverrides } from "./deployment-options.js";
import { kindOf } from "./kinds.js";
import { pythonJsonDumps, pythonStr, pythonTruthy } from "./python-json.js";
import type { ValidAnswer } from "./validate-answer.js";
import { isJsonObject, isNonEmptyString, type JsonObject } from "../model/json.js";

/**
 * Marks a text message as a structured cloud resource selection answer: the
 * kernel's own prefix (`RESOURCE_SELECTION_QUERY_PREFIX` of its
 * `iac_code.a2a.resource_selector`), which the reference adapter sends
 * before the compact JSON of the answer.
 */
export const RESOURCE_SELECTION_QUERY_PREFIX = "IAC_CODE_RESOURCE_SELECTION:";

export interface AnswerContext {
  /** The bound task: every answer goes to the task and context that asked (contract §5). */
  taskId: string;
  contextId: string;
  /** The resuming AG-UI run. */
  runId: string;
  /**
   * Whether permissions go out with SendMessage. The contract sends them so
   * only when every permission answered in this resume is sideband, which
   * one answer cannot know; defaults to this input's own flag.
   */
  sideband?: boolean;
}

export type A2aDataPart = { data: JsonObject; mediaType: "application/json" };

/** An A2A 1.0 message as ProtoJSON; the run adds `metadata.iac_code`. */
export interface ResumeMessage {
  messageId: string;
  role: "ROLE_USER";
  parts: [A2aTextPart] | [A2aDataPart];
  contextId: string;
  taskId: string;
}

export type AnswerDelivery =
  | {
      /** SendStreamingMessage, or SendMessage for a sideband permission. */
      call: "stream" | "sideband";
      message: ResumeMessage;
      /** The TOOL_CALL_RESULT the run emits first, closing the tool call that asked. */
      toolResult?: { toolCallId: string; content: string };
      /** A cloud resource selection's answer as an object, also for a kernel version that reads `metadata.iac_code.inputResponse`. */
      inputResponse?: JsonObject;
    }
  /** CancelTask; the run then finishes with `outcome: cancelled`, each tool call that asked answered as cancelled. */
  | { call: "cancel" };

/** The kernel correlates by toolUseId; a projection without one is sent `""` rather than a made-up id. */
const toolUseIdOf = (value: InputProjection) =>
  value.toolUseId === undefined || value.toolUseId === null ? "" : pythonStr(value.toolUseId);

function noAnswer(): AguiError {
  return new AguiError("RESUME_PAYLOAD_INVALID", { reason: "noAnswer" });
}

/**
 * Free text verbatim; a chosen option as the words the user saw (its label,
 * else name, else id). Matched on the kernel's own `id`, as the reference
 * does, so an option known only by position or `candidate_index` is sent as
 * that index, which is what the pipeline parses.
 */
function selectionText(value: InputProjection, payload: JsonObject): string {
  const freeText = [payload.freeText, payload.free_text].find(isNonEmptyString);
  if (freeText !== undefined) return freeText;
  const selectedId = [payload.selectedId, payload.selected_id].find(isNonEmptyString);
  if (selectedId === undefined) throw noAnswer();
  const options: unknown[] = Array.isArray(value.options) ? value.options : [];
  const chosen = options.find((option) => isJsonObject(option) && option.id != null && pythonStr(option.id) === selectedId);
  if (!isJsonObject(chosen)) return selectedId;
  return pythonStr([chosen.label, chosen.name].find(pythonTruthy) ?? chosen.id);
}

/** The pipeline parses this text with Python's json module and matches it as written, so it is Python's spelling. */
function deploymentText(value: InputProjection, payload: JsonObject): string {
  const { actionById, actions } = deploymentOptions(value.options);
  const action =
    typeof payload.action === "string"
      ? payload.action
      : typeof payload.selectedId === "string"
        ? actionById.get(payload.selectedId)
        : undefined;
  const overrides = parameterOverrides(payload.parameter_overrides);
  if (action === undefined || !(actions as string[]).includes(action) || overrides === undefined) throw noAnswer();
  return pythonJsonDumps({ action, parameter_overrides: overrides });
}

/** Key order is the kernel's (`ResourceSelectionResponse.to_dict`); free text is taken as a typed-in resource value. */
function resourceSelection(value: InputProjection, answer: ValidAnswer, ctx: AnswerContext): JsonObject {
  const response: JsonObject = {
    schemaVersion: 1,
    kind: "cloud_resource_selection",
    status: answer.status === "resolved" ? "selected" : "canceled",
    requestTaskId: ctx.taskId,
    contextId: ctx.contextId,
    inputId: value.inputId,
    toolUseId: toolUseIdOf(value),
  };
  const payload = answer.payload ?? {};
  if (answer.status === "cancelled") {
    if (typeof payload.optionsEmpty === "boolean") response.optionsEmpty = payload.optionsEmpty;
    return response;
  }
  const selector = isJsonObject(value.selector) ? value.selector : {};
  const chosen = [payload.value, payload.freeText].find(isNonEmptyString);
  if (chosen === undefined) throw noAnswer();
  if (isNonEmptyString(selector.id)) response.selectorId = selector.id;
  response.value = chosen;
  response.label = isNonEmptyString(payload.label) ? payload.label : chosen;
  // The kernel compares it with the source its selector asked about.
  if (isJsonObject(selector.source)) response.source = structuredClone(selector.source);
  return response;
}

function textMessage(messageId: string, text: string, ctx: AnswerContext): ResumeMessage {
  return { messageId, role: "ROLE_USER", parts: [{ text }], contextId: ctx.contextId, taskId: ctx.taskId };
}

export function answerMessage(pending: PendingInput, answer: ValidAnswer, ctx: AnswerContext): AnswerDelivery {
  const { value } = pending;
  const kind = kindOf(value);
  const toolResult = (content: string) =>
    isNonEmptyString(value.toolUseId) ? { toolResult: { toolCallId: value.toolUseId, content } } : {};
  switch (kind) {
    case "permission": {
      const sideband = ctx.sideband ?? pending.sideband;
      const decision = answer.status === "cancelled" ? "deny" : pythonStr(answer.payload.decision);
      // Exactly these six keys: the kernel rejects a permission part with any other.
      const data = {
        schemaVersion: 1,
        kind: "permission",
        requestTaskId: ctx.taskId,
        inputId: value.inputId,
        toolUseId: toolUseIdOf(value),
        decision,
      };
      return {
        call: sideband ? "sideband" : "stream",
        message: {
          messageId: sideband ? `agui-resume-${value.inputId}` : `agui-resume-${ctx.runId}-${value.inputId}`,
          role: "ROLE_USER",
          parts: [{ data, mediaType: "application/json" }],
          contextId: ctx.contextId,
          taskId: ctx.taskId,
        },
      };
    }
    case "cloud_resource_selection": {
      const inputResponse = resourceSelection(value, answer, ctx);
      const text = RESOURCE_SELECTION_QUERY_PREFIX + pythonJsonDumps(inputResponse, { compact: true });
      // A selection closes its tool call at once with the label the user picked, as the reference adapter does; a cancel does not.
      const picked = inputResponse.status === "selected" ? toolResult(pythonStr(inputResponse.label ?? inputResponse.value)) : {};
      return { call: "stream", message: textMessage(`agui-resume-${ctx.runId}`, text, ctx), inputResponse, ...picked };
    }
    case "deployment_confirmation":
    case "selection": {
      if (answer.status === "cancelled") return { call: "cancel" };
      const text = kind === "deployment_confirmation" ? deploymentText(value, answer.payload) : selectionText(value, answer.payload);
      return { call: "stream", message: textMessage(`agui-resume-${ctx.runId}`, text, ctx), ...toolResult(text) };
    }
    default:
      return kind satisfies never;
  }
}
