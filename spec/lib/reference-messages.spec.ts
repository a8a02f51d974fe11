/**
 * The message of each error the reference adapter names is its sentence,
 * word for word (issue 21): a client written against the reference shows,
 * or matches on, the same text from this service. What we say beyond it is
 * the separate detail, never glued to the message.
 *
 * The sentences are read from aliyun/iac-code, src/iac_code/agui/ at commit
 * 2550a1fde62bdb25ce5c3a189f65c62133f66e82 (adapter.py, app.py; the
 * allow-list of public messages in errors.py; handoff_routes.py and
 * subscribe_routes.py, whose bodies are a bare `{"error": <text>}`, the
 * text without a full stop) and inputs.py at
 * 7357a76ce53dcfa8f5d7c205ab25951065a2ce01. Its translated catalogues were
 * not at hand, so this table is English only; the other languages are
 * translations of these sentences (spec/lib/i18n.spec.ts checks that each
 * is translated, with the same placeholders).
 */
import { describe, expect, it } from "@jest/globals";
import { AguiError, type ErrorCode, type MessageParams } from "../../lib/errors.js";
import { detailParams } from "../../lib/i18n/detail.js";
import { describeError, messageFor } from "../../lib/i18n/index.js";

const cwd = (phrase: Parameters<typeof detailParams>[1]) => ({
  reason: "forwardedProps",
  ...detailParams("/forwardedProps/iacCode/cwd", phrase),
});

/** The situation (our code and params) → the reference's sentence for it. */
const REFERENCE: [ErrorCode, MessageParams, string][] = [
  // app.py: the HTTP edge.
  ["UNAUTHORIZED", {}, "A valid bearer token is required."],
  ["UNSUPPORTED_MEDIA_TYPE", {}, "Content-Type must be application/json."],
  ["REQUEST_TOO_LARGE", {}, "The AG-UI request body is too large."],
  ["REQUEST_TOO_LARGE", { reason: "cancel" }, "The cancel request body is too large."],
  ["INVALID_JSON", {}, "The request body is not valid JSON."],
  ["INVALID_JSON", { reason: "cancel" }, "The cancel request body is not valid JSON."],
  ["INVALID_INPUT", {}, "Invalid AG-UI RunAgentInput envelope."],
  ["INVALID_INPUT", { reason: "cancelBody" }, "threadId and rosInvocationId are required."],
  ["INVALID_INPUT", { reason: "notObject" }, "RunAgentInput must be a JSON object."],
  ["INVALID_INPUT", { reason: "cancelNotObject" }, "The cancel request must be a JSON object."],
  ["EXECUTION_NOT_FOUND", {}, "The execution was not found."],
  // handoff_routes.py and subscribe_routes.py.
  ["INVALID_INPUT", { reason: "handoffProtocol" }, "AG-UI handoff identity is required"],
  ["INVALID_INPUT", { reason: "handoffRequest" }, "Invalid handoff request"],
  ["INVALID_INPUT", { reason: "observeBody" }, "Invalid observation identity"],
  ["EXECUTION_NOT_FOUND", { reason: "checkpoint" }, "Execution checkpoint unavailable"],
  ["OBSERVATION_CONFLICT", {}, "Execution observation identity changed"],
  // inputs.py: the request's own content.
  ["INVALID_INPUT", { reason: "forwardedProps" }, "Invalid iac-code forwarded properties."],
  ["INVALID_INPUT", { reason: "tools" }, "Client-provided tools are not supported."],
  ["INVALID_INPUT", { reason: "userMessage" }, "A new run requires a user message."],
  ["INVALID_INPUT", { reason: "userContent" }, "Only text and inline data images are supported."],
  ["INVALID_INPUT", { reason: "remoteMedia" }, "Remote media URLs are not supported."],
  ["INVALID_INPUT", { reason: "imageMediaType" }, "The image media type is not supported."],
  ["INVALID_INPUT", { reason: "imageData" }, "The image data is not valid base64."],
  ["INVALID_INPUT", { reason: "imageTooLarge" }, "An image exceeds the maximum size."],
  ["INVALID_INPUT", { reason: "imagesTooLarge" }, "The total image content exceeds the maximum size."],
  ["INVALID_INPUT", { reason: "imageUndecodable" }, "The image data is invalid."],
  ["INVALID_INPUT", cwd("notAbsolute"), "The iac-code workspace must be an absolute path."],
  ["INVALID_INPUT", cwd("outsideRoots"), "The iac-code workspace is outside the allowed roots."],
  ["INVALID_INPUT", cwd("notDirectory"), "The iac-code workspace is not a directory."],
  ["INVALID_INPUT", cwd("cannotCreate"), "The iac-code workspace cannot be created."],
  ["INVALID_INPUT", cwd("intoProc"), "The iac-code workspace is invalid."],
  ["INVALID_INPUT", cwd("tooManyLinks"), "The iac-code workspace is invalid."],
  // adapter.py: admission.
  ["STATE_UNAVAILABLE", {}, "The AG-UI adapter state is unavailable."],
  ["EXECUTION_LOST", {}, "The execution to resume is no longer available."],
  ["EXECUTION_LOST", { reason: "unknownThread" }, "The execution to resume is no longer available."],
  ["EXECUTION_LOST", { reason: "invocationMismatch" }, "The resume request does not match the interrupted run."],
  ["DUPLICATE_RUN_ID", {}, "The AG-UI run id has already been used."],
  ["RUN_ID_CONFLICT", {}, "The AG-UI run id has already been used."],
  ["THREAD_BUSY", {}, "The AG-UI thread already has an active run."],
  ["THREAD_BINDING_CONFLICT", {}, "The AG-UI thread is already bound to another workspace or caller."],
  ["THREAD_BINDING_CONFLICT", { reason: "workspace" }, "The AG-UI thread is already bound to another workspace or caller."],
  ["THREAD_BINDING_CONFLICT", { reason: "caller" }, "The AG-UI thread is already bound to another workspace or caller."],
  ["RESUME_REQUIRED", {}, "The AG-UI thread is waiting for interrupt responses."],
  // adapter.py: a resume.
  ["EXECUTION_LOST", { reason: "nothingPending" }, "The A2A task to resume is unavailable."],
  ["EXECUTION_LOST", { reason: "taskNotFound" }, "The A2A task to resume is unavailable."],
  ["EXECUTION_LOST", { reason: "taskEnded" }, "The A2A task to resume is unavailable."],
  ["EXECUTION_LOST", { reason: "sessionLost" }, "The iac-code session to resume is unavailable."],
  ["SESSION_BACKUP_NOT_READY", {}, "Session backup is still synchronizing. Retry after 3 seconds."],
  ["INCOMPLETE_RESUME", {}, "The resume must resolve every pending interrupt exactly once."],
  ["INCOMPLETE_RESUME", { reason: "duplicate" }, "The resume contains duplicate interrupt ids."],
  ["UNKNOWN_INTERRUPT", {}, "The resume references an unknown interrupt."],
  ["RESUME_PAYLOAD_INVALID", {}, "The interrupt response payload is invalid."],
  ["RESUME_PAYLOAD_INVALID", { reason: "missing" }, "A resolved interrupt requires a payload."],
  ["RESUME_PAYLOAD_INVALID", { reason: "noAnswer" }, "The interrupt response does not contain an answer."],
  ["RESUME_ALREADY_APPLIED", {}, "The interrupt response has already been applied."],
  ["RESUME_ALREADY_APPLIED", { reason: "differentAnswer" }, "The interrupt response has already been applied."],
  ["EXECUTION_EXPIRED", {}, "The interrupted execution has expired."],
  ["A2A_UNAVAILABLE", {}, "The local A2A execution service is unavailable."],
  ["A2A_UNAVAILABLE", { reason: "answerNotAccepted" }, "The A2A interrupt response was not accepted."],
  ["A2A_UNAVAILABLE", { reason: "answerRejected" }, "The local A2A execution service rejected the interrupt response."],
  ["CANCELLED", {}, "The execution was cancelled."],
  ["CANCELLED", { reason: "byInterrupt" }, "The execution was cancelled by the interrupt response."],
  ["A2A_EXECUTION_FAILED", {}, "The A2A execution failed."],
  // adapter.py: what the kernel says back, and what cannot be stored.
  ["A2A_PROTOCOL_ERROR", { reason: "taskChanged" }, "The A2A task identity changed unexpectedly."],
  ["A2A_PROTOCOL_ERROR", { reason: "contextChanged" }, "The A2A context identity changed unexpectedly."],
  ["A2A_PROTOCOL_ERROR", { reason: "sessionChanged" }, "The iac-code session identity changed unexpectedly."],
  ["A2A_PROTOCOL_ERROR", { reason: "taskMismatch" }, "The A2A task identity does not match the interrupted run."],
  ["A2A_PROTOCOL_ERROR", { reason: "interruptTask" }, "An interrupt belongs to another A2A task."],
  ["A2A_PROTOCOL_ERROR", { reason: "interruptContext" }, "An interrupt belongs to another A2A context."],
  ["STATE_PERSISTENCE_FAILED", { reason: "taskMapping" }, "The execution mapping could not be committed."],
  ["STATE_PERSISTENCE_FAILED", { reason: "sessionMapping" }, "The execution session mapping could not be committed."],
  ["STATE_PERSISTENCE_FAILED", { reason: "interrupts" }, "The interrupted execution state could not be committed."],
  ["STATE_PERSISTENCE_FAILED", { reason: "acceptedAnswer" }, "The accepted interrupt response could not be committed."],
];

const label = ([code, params]: (typeof REFERENCE)[number]) =>
  [code, params.reason, params.phrase].filter((part) => part !== undefined).join(".");

describe("the messages of the codes the reference adapter names", () => {
  it.each(REFERENCE.map((row) => [label(row), ...row] as const))("%s is the reference's sentence", (_label, code, params, sentence) => {
    expect(messageFor(new AguiError(code, params), "en")).toBe(sentence);
  });

  it("keep our specifics out of the message: a reason that says more says it as the detail", () => {
    const specific = REFERENCE.map(([code, params]) => describeError(new AguiError(code, params), "en")).filter(
      (text) => text.detail !== undefined,
    );
    // The reasons with a note of their own, and the cwd's problems with where they are.
    expect(specific.length).toBeGreaterThanOrEqual(20);
    for (const { message, detail } of specific) expect(message).not.toContain(detail!);
    expect(describeError(new AguiError("THREAD_BINDING_CONFLICT", { reason: "workspace" }), "en")).toEqual({
      message: "The AG-UI thread is already bound to another workspace or caller.",
      detail: "The AG-UI thread is bound to another workspace: start a new thread to work in this cwd.",
    });
    expect(describeError(new AguiError("INVALID_INPUT", cwd("outsideRoots")), "en")).toEqual({
      message: "The iac-code workspace is outside the allowed roots.",
      detail: "/forwardedProps/iacCode/cwd: is outside the allowed workspace roots",
    });
  });
});
