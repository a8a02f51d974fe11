/**
 * The service's log: pino, one JSON line per record — `time` (ISO 8601),
 * `level` (its name), `msg`, and the ids of what it is about (`threadId`,
 * `runId`, `executionId`, `taskId`; `method` and `path` for a request).
 * Every component takes the `Logger` it is given and makes children of it;
 * without one it logs nothing.
 *
 * What never reaches a record: credentials and the user's text. Records are
 * written from ids, codes and the service's own words, never from request
 * bodies, kernel frames or messages sent to a client. Errors go through
 * `serializeError`, which keeps only what the service itself wrote (see
 * there); `redact` censors credential-shaped keys as a second line of
 * defence, should a later record ever carry such an object.
 *
 * Ids and the managed kernel's output are text the service did not write:
 * JSON escapes their control characters, but not the line and paragraph
 * separators (U+2028, U+2029) nor the bidirectional controls, which make a
 * record read otherwise than it is in a terminal or a log viewer. Each is
 * written as its `\uXXXX` escape: the line is the same JSON, and shows them.
 */
import { pino, type DestinationStream, type Logger as PinoLogger } from "pino";
import { AguiError } from "./errors.js";

export type Logger = PinoLogger;

export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export const DEFAULT_LOG_LEVEL: LogLevel = "info";

export const isLogLevel = (value: string): value is LogLevel => (LOG_LEVELS as readonly string[]).includes(value);

/** Keys a credential travels under somewhere in the service (request, kernel call, config); censored at any depth up to 4. */
export const CREDENTIAL_KEYS = [
  "authorization",
  "cookie",
  "token",
  "authToken",
  "a2aToken",
  "apiKey",
  "api_key",
  "llmApiKey",
  "llm_api_key",
  "llmHeaders",
  "llm_headers",
  "accessKeySecret",
  "access_key_secret",
  "securityToken",
  "security_token",
  "password",
  "secret",
] as const;

const REDACT_DEPTH = 4;

/** `key`, `*.key`, `*.*.key`, …: pino's redaction paths take one key per wildcard. */
const redactPaths = () =>
  CREDENTIAL_KEYS.flatMap((key) => Array.from({ length: REDACT_DEPTH }, (_, depth) => `${"*.".repeat(depth)}${key}`));

export interface LoggerOptions {
  level?: LogLevel;
  /** Where the lines go; default stdout, written synchronously (nothing is lost at `process.exit`). */
  destination?: DestinationStream;
}

/** Separators and bidirectional controls JSON leaves as they are: LRM, RLM, ALM, LRE…RLO, LSEP, PSEP, LRI…PDI. */
const INVISIBLE_CONTROLS = /[\u200E\u200F\u061C\u202A-\u202E\u2028\u2029\u2066-\u2069]/g;

/** A record's line with each of those as its JSON escape; they can only be inside its strings, so it stays the same JSON. */
export const escapeInvisibleControls = (line: string): string =>
  line.replace(INVISIBLE_CONTROLS, (char) => `\\u${char.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}`);

export function createLogger({ level = DEFAULT_LOG_LEVEL, destination }: LoggerOptions = {}): Logger {
  const options: pino.LoggerOptions = {
    level,
    hooks: { streamWrite: escapeInvisibleControls },
    name: "iac-code-agui",
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    serializers: { err: serializeError },
    redact: { paths: redactPaths(), censor: "[redacted]" },
  };
  return destination ? pino(options, destination) : pino(options);
}

interface LazyTarget {
  parent: Logger;
  bindings: pino.Bindings;
  /** The Proxy that stands for this child. */
  self?: Logger;
  made?: Logger;
}

/** What a lazy child answers with the logger it stands for, made now: a real logger has no such member. */
const MADE = Symbol("made");

const madeOf = (target: LazyTarget): Logger => {
  const parent = (target.parent as Logger & { [MADE]?: Logger })[MADE] ?? target.parent;
  return (target.made ??= parent.child(target.bindings));
};

/** One handler for every lazy child: what a child costs an open stream is its bindings and a Proxy, no closures. */
const LAZY_CHILD: ProxyHandler<LazyTarget> = {
  get(target, property) {
    if (property === MADE) return madeOf(target);
    // A child of a lazy child is lazy too: a run's logger is made of its request's, and neither is made unless used.
    if (property === "child" && target.made === undefined)
      return (bindings: pino.Bindings, options?: pino.ChildLoggerOptions) =>
        options === undefined ? lazyChild(target.self!, bindings) : madeOf(target).child(bindings, options);
    const made = madeOf(target);
    const value: unknown = Reflect.get(made, property, made);
    return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(made) : value;
  },
  set(target, property, value) {
    return Reflect.set(madeOf(target), property, value);
  },
};

/**
 * `parent.child(bindings)`, made when first used. A pino child holds about
 * half a KiB (its bindings serialized, its own copies of the level
 * methods) for as long as it lives, and each request and each run has one
 * for as long as its stream is open, while most of them write no record
 * at all.
 */
export function lazyChild(parent: Logger, bindings: pino.Bindings): Logger {
  const target: LazyTarget = { parent, bindings };
  return (target.self = new Proxy(target, LAZY_CHILD) as unknown as Logger);
}

/** For components given no logger: a record costs a level check. */
export const silentLogger: Logger = pino({ level: "silent" });

/** An error as a record shows it. */
export interface SerializedError {
  type: string;
  message: string;
  stack?: string;
  code?: string | number;
  /** An AguiError's message parameters that name no text (`reason`, `rpcCode`, `httpStatus`, `state`). */
  params?: Record<string, string | number>;
  syscall?: string;
  cause?: SerializedError;
}

/**
 * Errors whose messages the service writes from its own facts: codes, file
 * names and what is wrong with a file (never what is in it), and the
 * engine's words about the code. Any other message may quote what the
 * error was about — `JSON.parse` quotes the text it could not read, a
 * kernel's non-JSON answer is kept as `HTTP <status>: <body>`, a library
 * error may repeat what it was given — so it is withheld; the type, the
 * code and the stack still say where it came from.
 */
const OWN_WORDS = new Set([
  "AguiError",
  "StateUnavailableError",
  "StatePersistenceError",
  "JsonFileError",
  "ListenError",
  "TypeError",
  "RangeError",
  "ReferenceError",
]);

/**
 * AguiError parameters that are safe to log. `detail` is not: for a kernel
 * failure it is the kernel's own message (up to 500 characters the service
 * does not control, which may quote the prompt, a tool's arguments or a
 * provider's answer about a key), and for a refused request it describes
 * the client's body. The client gets it in its answer; the log keeps the
 * code, and `rpcCode` to find the kernel's own record.
 */
const LOGGED_PARAMS = new Set(["reason", "rpcCode", "httpStatus", "state"]);

const WITHHELD = "(withheld: not the service's own words)";
const MAX_CAUSES = 5;

interface ErrorLike {
  name?: unknown;
  message?: unknown;
  stack?: unknown;
  code?: unknown;
  syscall?: unknown;
  cause?: unknown;
}

/** A Node system error (ECONNREFUSED, ENOENT, …): its message names the call and the address or path. */
const isSystemError = (error: ErrorLike) => typeof error.syscall === "string" && typeof error.code === "string";

/** The stack's frames, under a first line of our choosing (V8 starts a stack with `name: message`). */
function framesOf(error: ErrorLike, type: string, message: string): string | undefined {
  if (typeof error.stack !== "string") return undefined;
  const original = typeof error.message === "string" ? error.message : "";
  const header = original === "" ? String(error.name) : `${String(error.name)}: ${original}`;
  const rest = error.stack.startsWith(header) ? error.stack.slice(header.length) : error.stack;
  const frames = rest.split("\n").filter((line) => /^\s+at /.test(line));
  return [`${type}: ${message}`, ...frames].join("\n");
}

function serializeOne(value: unknown, depth: number, seen: Set<unknown>): SerializedError {
  if (!(value instanceof Error)) {
    const object = (typeof value === "object" && value !== null ? value : {}) as ErrorLike;
    // A JSON-RPC error object from the kernel: its code says what failed; its message and data are the kernel's text.
    const code = typeof object.code === "number" || typeof object.code === "string" ? object.code : undefined;
    return {
      type: typeof object.message === "string" ? "JsonRpcError" : typeof value,
      message: WITHHELD,
      ...(code === undefined ? {} : { code }),
    };
  }
  seen.add(value);
  const error = value as Error & ErrorLike;
  const type = error.constructor?.name && error.constructor.name !== "Object" ? error.constructor.name : String(error.name);
  const message = OWN_WORDS.has(type) || isSystemError(error) ? error.message : WITHHELD;
  const serialized: SerializedError = { type, message };
  const stack = framesOf(error, type, message);
  if (stack !== undefined) serialized.stack = stack;
  if (typeof error.code === "string" || typeof error.code === "number") serialized.code = error.code;
  if (typeof error.syscall === "string") serialized.syscall = error.syscall;
  if (value instanceof AguiError) {
    const params = Object.fromEntries(Object.entries(value.params).filter(([key]) => LOGGED_PARAMS.has(key)));
    if (Object.keys(params).length > 0) serialized.params = params;
  }
  if (error.cause !== undefined && error.cause !== null && depth < MAX_CAUSES && !seen.has(error.cause)) {
    serialized.cause = serializeOne(error.cause, depth + 1, seen);
  }
  return serialized;
}

/** pino's `err` serializer for this service: type, code, stack and causes, and only messages the service wrote itself. */
export function serializeError(error: unknown): SerializedError {
  return serializeOne(error, 0, new Set());
}

/** The level a failure is logged at: a bug is an error, anything else the service answers with a code a warning. */
export const levelForCode = (code: string): "error" | "warn" => (code === "INTERNAL_ERROR" ? "error" : "warn");

/** A failure's fields in a record: the error, and its code on top (for filtering) when it has one. */
export function errorFields(error: unknown): { err: unknown; code?: string } {
  return error instanceof AguiError ? { err: error, code: error.code } : { err: error };
}
