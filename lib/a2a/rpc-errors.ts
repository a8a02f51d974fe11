/**
 * What a kernel answer means: the `result` of a JSON-RPC response, or the
 * AguiError it stands for. Every path of the client (unary, pre-stream,
 * mid-stream) reads kernel answers through here, so they fail alike.
 */
import { AguiError, type ErrorCode, type MessageParams } from "../errors.js";
import { isJsonObject } from "../model/json.js";

/**
 * How deep a kernel answer may nest, its JSON-RPC envelope included.
 * JSON.parse takes any depth, but what comes after it recurses (the SSE
 * encoder's JSON.stringify overflows the stack a few thousand levels down),
 * so a deeper answer is refused as it is read, before anything projects it.
 * A real frame nests about 7 levels around its data parts' own nesting, and
 * 100 is protobuf's default recursion limit (A2A 1.0 is defined in
 * protobuf, and each JSON level of a data part is two protobuf messages), so
 * no frame that went through a protobuf stack comes near it.
 */
export const MAX_KERNEL_JSON_DEPTH = 100;

/** A JSON-RPC 2.0 error object. `data` is, from `@a2a-js/sdk`, an array of `google.rpc.ErrorInfo`. */
export interface RpcError {
  code: number;
  message: string;
  data?: unknown;
}

/** The `result` of one JSON-RPC response or stream frame, as wire JSON. */
export type JsonRpcResult = Record<string, unknown>;

function isRpcError(value: unknown): value is RpcError {
  return isJsonObject(value) && typeof value.code === "number" && typeof value.message === "string";
}

/**
 * The kernel's JSON-RPC error behind an AguiError, if there was one, so a
 * caller can react to a code (-32001 task not found, -32002 not cancelable)
 * without reading messages.
 */
export function rpcErrorOf(error: AguiError): RpcError | undefined {
  return isRpcError(error.cause) ? error.cause : undefined;
}

/**
 * The kernel signals "session backup still syncing" in `error.data`, either
 * as the object of the wire contract (§2) or, when it goes through the SDK's
 * error mapping, as an ErrorInfo whose `reason` carries the code.
 */
function isBackupNotReady(data: unknown): boolean {
  const entries = Array.isArray(data) ? data : [data];
  return entries.some(
    (entry) =>
      isJsonObject(entry) &&
      ((entry.code === "SESSION_BACKUP_NOT_READY" && entry.retryable === true) || entry.reason === "SESSION_BACKUP_NOT_READY"),
  );
}

// Only the code and the kernel's own message travel in params; `data` can
// hold arbitrary metadata, so it stays in `cause`, which is for logs.
const rpcParams = (rpc: RpcError): MessageParams => ({ rpcCode: rpc.code, detail: rpc.message.slice(0, 500) });

/** A JSON-RPC error object answered by the kernel, before or during a stream. */
export function executionFailed(rpc: RpcError): AguiError {
  const code: ErrorCode = isBackupNotReady(rpc.data) ? "SESSION_BACKUP_NOT_READY" : "A2A_EXECUTION_FAILED";
  return new AguiError(code, rpcParams(rpc), { cause: rpc });
}

/** The kernel could not be reached or answered outside JSON-RPC (non-2xx, timeout, cut connection). */
export function unavailable(cause: unknown, httpStatus?: number): AguiError {
  const params: MessageParams = httpStatus === undefined ? {} : { httpStatus };
  // A 500 from the SDK still carries a JSON-RPC error; keep it so rpcErrorOf sees it.
  if (isJsonObject(cause) && isRpcError(cause.error)) {
    return new AguiError("A2A_UNAVAILABLE", { ...params, ...rpcParams(cause.error) }, { cause: cause.error });
  }
  return new AguiError("A2A_UNAVAILABLE", params, { cause });
}

export function protocolError(cause: unknown): AguiError {
  return new AguiError("A2A_PROTOCOL_ERROR", {}, { cause });
}

/**
 * `result` of a parsed JSON-RPC response to the request whose id is
 * `requestId`; throws the AguiError it stands for otherwise. A response
 * must say `"jsonrpc": "2.0"`, and a result must carry the request's own
 * id: a frame without the envelope, of another protocol version, or
 * answering another request (a kernel that mixed up its streams) is
 * `A2A_PROTOCOL_ERROR`, never projected. An error may carry a null id (the
 * server could not read the request's); it fails the call either way.
 */
export function resultOf(response: unknown, requestId?: string): JsonRpcResult {
  if (isJsonObject(response)) {
    if (response.jsonrpc !== "2.0") throw protocolError(new Error("a kernel answer without the JSON-RPC 2.0 envelope"));
    if (isRpcError(response.error)) throw executionFailed(response.error);
    if (requestId !== undefined && response.id !== requestId) {
      throw protocolError(new Error("a kernel answer to another request than the one it was sent for"));
    }
    if (isJsonObject(response.result)) return response.result;
  }
  throw protocolError(new Error("JSON-RPC response with neither an object `result` nor an `error`"));
}

/** An `event: error` record: a JSON-RPC error response, or (as the SDK's docs show it) a bare error object. */
export function streamErrorOf(record: unknown): AguiError {
  const rpc = isJsonObject(record) && "error" in record ? record.error : record;
  return isRpcError(rpc) ? executionFailed(rpc) : protocolError(new Error("`event: error` record without a JSON-RPC error"));
}

/** A JSON (not SSE) HTTP answer of the kernel to request `requestId` → its JSON-RPC `result`, or the AguiError it stands for. */
export function resultOfHttp(status: number, text: string, requestId?: string): JsonRpcResult {
  if (status < 200 || status >= 300) {
    let body: unknown;
    try {
      body = parseJson(text);
    } catch {
      body = new Error(`HTTP ${status}: ${text.slice(0, 200)}`);
    }
    throw unavailable(body, status);
  }
  return resultOf(parseJson(text), requestId);
}

/** JSON text → value; text that is not JSON, or nests deeper than MAX_KERNEL_JSON_DEPTH, is a protocol error. */
export function parseJson(text: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw protocolError(error);
  }
  if (!tooFewOpenersToNest(text, MAX_KERNEL_JSON_DEPTH) && nestsDeeperThan(value, MAX_KERNEL_JSON_DEPTH)) {
    throw protocolError(new Error(`the kernel's JSON nests deeper than ${MAX_KERNEL_JSON_DEPTH} levels`));
  }
  return value;
}

/** Below this length, counting a text's brackets costs less than walking its value (about 0.1 against 0.3 µs for a text delta's frame). */
const COUNT_OPENERS_BELOW_CHARS = 4096;

/**
 * Whether `text` is short and has too few `{` and `[` (in strings or not)
 * for its value to nest more than `levels` deep: each level is a container,
 * and each container one of them. Every frame is checked, nearly all are
 * small and shallow, and this spares them the walk.
 */
function tooFewOpenersToNest(text: string, levels: number): boolean {
  if (text.length >= COUNT_OPENERS_BELOW_CHARS) return false;
  let count = 0;
  for (let at = text.indexOf("{"); at !== -1; at = text.indexOf("{", at + 1)) if (++count > levels) return false;
  for (let at = text.indexOf("["); at !== -1; at = text.indexOf("[", at + 1)) if (++count > levels) return false;
  return true;
}

/**
 * Whether a parsed value has containers more than `levels` deep. Recursive,
 * but never more than `levels + 1` calls deep; unlike validation's
 * `jsonDepth` it allocates nothing per node, which matters on every frame.
 */
export function nestsDeeperThan(value: unknown, levels: number): boolean {
  if (typeof value !== "object" || value === null) return false;
  if (levels === 0) return true;
  if (Array.isArray(value)) return value.some((item) => nestsDeeperThan(item, levels - 1));
  for (const key in value) if (nestsDeeperThan((value as Record<string, unknown>)[key], levels - 1)) return true;
  return false;
}
