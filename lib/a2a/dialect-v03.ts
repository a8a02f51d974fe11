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
 * allocation-light: every frame of a 0.3 stream passes through here, and a
 * stream's updates are translated in place (see `streamResultFromV03`).
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

/**
 * The fields of a 0.3 object but `kind` (and `final`), by a plain loop: every
 * frame passes here, and object rest (`{kind, ...rest}`) costs several
 * times as much in V8.
 */
function withoutKind(source: JsonObject): JsonObject {
  const copy: JsonObject = {};
  for (const key in source) if (key !== "kind" && key !== "final") copy[key] = source[key];
  return copy;
}

/** A 0.3 part → the 1.0 part (ProtoJSON); an unknown kind passes as it came, for the projection to ignore (R-SIB-9). */
export function partFromV03(part: V03Part | JsonObject): JsonObject {
  const source = part as JsonObject;
  const metadata = source.metadata;
  let converted: JsonObject;
  switch (source.kind) {
    case "text":
      converted = { text: source.text };
      break;
    case "data":
      converted = { data: source.data, mediaType: "application/json" };
      break;
    case "file": {
      const file = isJsonObject(source.file) ? source.file : {};
      converted = typeof file.bytes === "string" ? { raw: file.bytes } : { url: file.uri };
      if (typeof file.mimeType === "string") converted.mediaType = file.mimeType;
      if (typeof file.name === "string") converted.filename = file.name;
      break;
    }
    default:
      return withoutKind(source);
  }
  if (isJsonObject(metadata)) converted.metadata = metadata;
  return converted;
}

/**
 * A part of a frame the service owns, as 1.0 reads it: a text part keeps its
 * object, its `kind` cleared; any other kind changes shape, so it is rebuilt.
 */
function partFromV03InPlace(part: JsonObject): JsonObject {
  if (part.kind !== "text") return partFromV03(part);
  part.kind = undefined;
  return part;
}

function partsFromV03(parts: unknown): JsonObject[] {
  const converted: JsonObject[] = [];
  if (Array.isArray(parts)) for (const part of parts) if (isJsonObject(part)) converted.push(partFromV03(part));
  return converted;
}

/** `partsFromV03` reusing the array, unless some of it is no part (then only its objects are kept, in a new one). */
function partsFromV03InPlace(parts: unknown): JsonObject[] {
  if (!Array.isArray(parts) || !parts.every(isJsonObject)) return partsFromV03(parts);
  for (let i = 0; i < parts.length; i++) parts[i] = partFromV03InPlace(parts[i] as JsonObject);
  return parts as JsonObject[];
}

export function messageFromV03(message: V03Message | JsonObject): JsonObject {
  const converted = withoutKind(message as JsonObject);
  const role = ROLE_FROM_V03[String(converted.role)];
  if (role !== undefined) converted.role = role;
  converted.parts = partsFromV03(converted.parts);
  return converted;
}

/** `messageFromV03` on a message the service owns: its object and its parts array are reused. */
function messageFromV03InPlace(message: JsonObject): JsonObject {
  clear(message, "kind");
  const role = ROLE_FROM_V03[String(message.role)];
  if (role !== undefined) message.role = role;
  message.parts = partsFromV03InPlace(message.parts);
  return message;
}

function statusFromV03(status: V03TaskStatus | JsonObject | undefined): JsonObject | undefined {
  if (!isJsonObject(status)) return undefined;
  const converted = withoutKind(status);
  converted.state = stateFromV03(status.state);
  if (isJsonObject(status.message)) converted.message = messageFromV03(status.message);
  else delete converted.message;
  return converted;
}

function artifactFromV03(artifact: V03Artifact | JsonObject): JsonObject {
  const converted = withoutKind(artifact as JsonObject);
  converted.parts = partsFromV03(converted.parts);
  return converted;
}

/** A 0.3 Task → the bare 1.0 Task (as GetTask and CancelTask answer it). */
export function taskFromV03(task: V03Task | JsonObject): JsonObject {
  const converted = withoutKind(task as JsonObject);
  if (converted.status !== undefined) converted.status = statusFromV03(converted.status as JsonObject);
  if (Array.isArray(converted.artifacts)) converted.artifacts = converted.artifacts.filter(isJsonObject).map(artifactFromV03);
  else delete converted.artifacts;
  if (Array.isArray(converted.history)) converted.history = converted.history.filter(isJsonObject).map(messageFromV03);
  else delete converted.history;
  return converted;
}

/*
 * A status or artifact update (nearly every frame of a stream) is translated
 * in place: the frame is the service's own, fresh from JSON.parse, and
 * copying it to drop `kind` cost more than the rest of the translation. A
 * field that has no 1.0 counterpart is set to `undefined` rather than
 * deleted: JSON leaves it out all the same, no 1.0 reader looks at it, and
 * `delete` would turn each object into a slower dictionary.
 */

/** Clears a field the object has; one it lacks is not added (that would change the object's shape). */
function clear(object: JsonObject, key: string): void {
  if (object[key] !== undefined) object[key] = undefined;
}

// `final` has no 1.0 counterpart: the stream's end says the same, and the state decides the run's end.
function statusUpdateFromV03(update: V03StatusUpdate | JsonObject): JsonObject {
  const converted = update as JsonObject;
  converted.kind = undefined;
  clear(converted, "final");
  const status = converted.status;
  if (!isJsonObject(status)) converted.status = {};
  else {
    status.state = stateFromV03(status.state);
    if (isJsonObject(status.message)) messageFromV03InPlace(status.message);
    else clear(status, "message");
  }
  return converted;
}

function artifactUpdateFromV03(update: V03ArtifactUpdate | JsonObject): JsonObject {
  const converted = update as JsonObject;
  converted.kind = undefined;
  const artifact = converted.artifact;
  if (!isJsonObject(artifact)) converted.artifact = {};
  else {
    clear(artifact, "kind");
    artifact.parts = partsFromV03InPlace(artifact.parts);
  }
  return converted;
}

/**
 * One 0.3 result (a stream frame, or what `message/send` answers) → the 1.0
 * StreamResponse: the payload under the key that names it. A result with no
 * `kind` 0.3 knows is a protocol error, as a 1.0 frame without a known key
 * would be unreadable. A status or artifact update is the payload itself,
 * translated in place: the caller hands over a result it no longer reads.
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
