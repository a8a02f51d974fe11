/**
 * A2A 0.3 on the wire, A2A 1.0 everywhere else: the client sends a call in
 * 0.3's words and reads each 0.3 answer back as the 1.0 answer it stands
 * for, so nothing above `lib/a2a/` knows which dialect the agent speaks.
 *
 *   method   SendStreamingMessage → message/stream, GetTask → tasks/get, …
 *   request  {role:"ROLE_USER", parts:[{text}]} → {kind:"message", role:"user", parts:[{kind:"text", text}]}
 *   answer   {kind:"status-update", status:{state:"input-required"}, final:true}
 *              → {statusUpdate:{status:{state:"TASK_STATE_INPUT_REQUIRED"}}}
 *
 * 0.3's shapes are `@a2a-js/sdk` 0.3's (`a2a-sdk-v03`); 1.0's are the
 * ProtoJSON the rest of the service reads (`request-mapping.ts`). Pure and
 * allocation-light: every frame of a 0.3 stream passes through here.
 */
import type {
  Artifact as V03Artifact,
  Message as V03Message,
  Part as V03Part,
  Task as V03Task,
  TaskArtifactUpdateEvent as V03ArtifactUpdate,
  TaskStatus as V03TaskStatus,
  TaskStatusUpdateEvent as V03StatusUpdate,
} from "a2a-sdk-v03";
import { isJsonObject, type JsonObject } from "../model/json.js";
import type { JsonRpcResult } from "./rpc-errors.js";
import { protocolError } from "./rpc-errors.js";

/** The client's methods (1.0 names) that a 0.3 agent has, and what 0.3 calls them. */
export const V03_METHODS: Readonly<Record<string, string>> = {
  SendStreamingMessage: "message/stream",
  SendMessage: "message/send",
  GetTask: "tasks/get",
  CancelTask: "tasks/cancel",
  SubscribeToTask: "tasks/resubscribe",
};

/** The 1.0 method's 0.3 name; a method 0.3 has no counterpart for is a protocol error, never a guess. */
export function v03Method(method: string): string {
  const name = V03_METHODS[method];
  if (name === undefined) throw protocolError(new Error(`A2A 0.3 has no counterpart of ${method}`));
  return name;
}

// ---------------------------------------------------------------- requests

const ROLE_TO_V03: Readonly<Record<string, "user" | "agent">> = { ROLE_USER: "user", ROLE_AGENT: "agent" };

/**
 * A 1.0 part (ProtoJSON) → the 0.3 part. An image is, by the iac-code
 * kernel's contract, a data part `{filename, bytes}` with an image media
 * type; a 0.3 agent knows images as file parts, so it gets one.
 */
export function partToV03(part: JsonObject): V03Part {
  const metadata = isJsonObject(part.metadata) ? { metadata: part.metadata } : {};
  if (typeof part.text === "string") return { kind: "text", text: part.text, ...metadata };
  const mediaType = typeof part.mediaType === "string" ? part.mediaType : undefined;
  const mimeType = mediaType === undefined ? {} : { mimeType: mediaType };
  const name = typeof part.filename === "string" && part.filename !== "" ? { name: part.filename } : {};
  if (isJsonObject(part.data)) {
    const { filename, bytes } = part.data;
    if (mediaType?.startsWith("image/") && typeof bytes === "string") {
      const fileName = typeof filename === "string" ? { name: filename } : {};
      return { kind: "file", file: { bytes, ...mimeType, ...fileName }, ...metadata };
    }
    return { kind: "data", data: part.data, ...metadata };
  }
  if (typeof part.raw === "string") return { kind: "file", file: { bytes: part.raw, ...mimeType, ...name }, ...metadata };
  if (typeof part.url === "string") return { kind: "file", file: { uri: part.url, ...mimeType, ...name }, ...metadata };
  // 0.3's data part holds an object only: any other JSON value is wrapped rather than lost.
  return { kind: "data", data: { value: part.data ?? null }, ...metadata };
}

/** A 1.0 message the service sends → the 0.3 message. */
export function messageToV03(message: JsonObject): V03Message {
  const { role, parts, ...rest } = message;
  return {
    ...rest,
    kind: "message",
    messageId: typeof message.messageId === "string" ? message.messageId : "",
    role: ROLE_TO_V03[String(role)] ?? "user",
    parts: Array.isArray(parts) ? parts.filter(isJsonObject).map(partToV03) : [],
  } as V03Message;
}

/** The params of a call, as 0.3 takes them: only a message (SendMessage, SendStreamingMessage) is spelled differently. */
export function paramsToV03(params: unknown): unknown {
  if (!isJsonObject(params) || !isJsonObject(params.message)) return params;
  return { ...params, message: messageToV03(params.message) };
}

// ----------------------------------------------------------------- answers

const ROLE_FROM_V03: Readonly<Record<string, string>> = { user: "ROLE_USER", agent: "ROLE_AGENT" };

/** Lowercase 0.3 states → 1.0's names, built once (`input-required` → `TASK_STATE_INPUT_REQUIRED`). */
const STATE_FROM_V03: ReadonlyMap<string, string> = new Map(
  ["submitted", "working", "input-required", "completed", "canceled", "failed", "rejected", "auth-required"].map((state) => [
    state,
    `TASK_STATE_${state.toUpperCase().replaceAll("-", "_")}`,
  ]),
);

/** 0.3's `unknown` (and anything newer) is 1.0's unspecified state. */
const stateFromV03 = (state: unknown) => STATE_FROM_V03.get(String(state)) ?? "TASK_STATE_UNSPECIFIED";

/** A 0.3 part → the 1.0 part (ProtoJSON); an unknown kind passes as it came, for the projection to ignore (R-SIB-9). */
export function partFromV03(part: V03Part | JsonObject): JsonObject {
  const { kind, metadata } = part as JsonObject;
  const kept = isJsonObject(metadata) ? { metadata } : {};
  switch (kind) {
    case "text":
      return { text: (part as { text: unknown }).text, ...kept };
    case "data":
      return { data: (part as { data: unknown }).data, mediaType: "application/json", ...kept };
    case "file": {
      const file = (part as { file: unknown }).file;
      if (!isJsonObject(file)) return { ...kept };
      const described = {
        ...(typeof file.mimeType === "string" ? { mediaType: file.mimeType } : {}),
        ...(typeof file.name === "string" ? { filename: file.name } : {}),
        ...kept,
      };
      return typeof file.bytes === "string" ? { raw: file.bytes, ...described } : { url: file.uri, ...described };
    }
    default: {
      const { kind: _kind, ...rest } = part as JsonObject;
      return rest;
    }
  }
}

const partsFromV03 = (parts: unknown) => (Array.isArray(parts) ? parts.filter(isJsonObject).map(partFromV03) : []);

export function messageFromV03(message: V03Message | JsonObject): JsonObject {
  const { kind: _kind, role, parts, ...rest } = message as JsonObject;
  return { ...rest, role: ROLE_FROM_V03[String(role)] ?? role, parts: partsFromV03(parts) };
}

function statusFromV03(status: V03TaskStatus | JsonObject | undefined): JsonObject | undefined {
  if (!isJsonObject(status)) return undefined;
  const { state, message, ...rest } = status;
  return { ...rest, state: stateFromV03(state), ...(isJsonObject(message) ? { message: messageFromV03(message) } : {}) };
}

function artifactFromV03(artifact: V03Artifact | JsonObject): JsonObject {
  const { parts, ...rest } = artifact as JsonObject;
  return { ...rest, parts: partsFromV03(parts) };
}

/** A 0.3 Task → the bare 1.0 Task (as GetTask and CancelTask answer it). */
export function taskFromV03(task: V03Task | JsonObject): JsonObject {
  const { kind: _kind, status, artifacts, history, ...rest } = task as JsonObject;
  return {
    ...rest,
    ...(status === undefined ? {} : { status: statusFromV03(status as JsonObject) }),
    ...(Array.isArray(artifacts) ? { artifacts: artifacts.filter(isJsonObject).map(artifactFromV03) } : {}),
    ...(Array.isArray(history) ? { history: history.filter(isJsonObject).map(messageFromV03) } : {}),
  };
}

function statusUpdateFromV03(update: V03StatusUpdate | JsonObject): JsonObject {
  // `final` has no 1.0 counterpart: the stream's end says the same, and the state decides the run's end.
  const { kind: _kind, final: _final, status, ...rest } = update as JsonObject;
  return { ...rest, status: statusFromV03(status as JsonObject) ?? {} };
}

function artifactUpdateFromV03(update: V03ArtifactUpdate | JsonObject): JsonObject {
  const { kind: _kind, artifact, ...rest } = update as JsonObject;
  return { ...rest, artifact: isJsonObject(artifact) ? artifactFromV03(artifact) : {} };
}

/**
 * One 0.3 result (a stream frame, or what `message/send` answers) → the 1.0
 * StreamResponse: the payload under the key that names it. A result with no
 * `kind` 0.3 knows is a protocol error, as a 1.0 frame without a known key
 * would be unreadable.
 */
export function streamResultFromV03(result: JsonRpcResult): JsonRpcResult {
  switch (result.kind) {
    case "status-update":
      return { statusUpdate: statusUpdateFromV03(result) };
    case "artifact-update":
      return { artifactUpdate: artifactUpdateFromV03(result) };
    case "task":
      return { task: taskFromV03(result) };
    case "message":
      return { message: messageFromV03(result) };
    default:
      throw protocolError(new Error(`an A2A 0.3 result of unknown kind ${JSON.stringify(result.kind)}`));
  }
}

/** What `tasks/get` and `tasks/cancel` answer → the bare 1.0 Task. */
export function taskResultFromV03(result: JsonRpcResult): JsonRpcResult {
  if (result.kind !== undefined && result.kind !== "task") {
    throw protocolError(new Error(`an A2A 0.3 task call answered a ${JSON.stringify(result.kind)}`));
  }
  return taskFromV03(result);
}
