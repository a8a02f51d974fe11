/**
 * The checks every store applies to a thread's stored document, in both
 * directions, whatever holds the bytes (a file, a Redis key): one size cap,
 * UTF-8 JSON of an object, schema version 1, the thread's own id, the
 * thread-state schema, and the projection onto the known fields. A store
 * only adds where the text lives; a problem is named, never the content.
 */
import { MAX_JSON_FILE_BYTES } from "./atomic-json-adapter.js";
import { projectThreadState, schemaProblem } from "./thread-state-document.js";
import { THREAD_STATE_SCHEMA_VERSION, type ThreadState } from "./thread-state.js";
import { StatePersistenceError, StateUnavailableError } from "./thread-store.js";

/** The most a stored thread state may hold, in bytes, whichever store holds it. */
export const MAX_THREAD_STATE_BYTES = MAX_JSON_FILE_BYTES;

/**
 * A stored document, already parsed, as the thread's state; `where` names it
 * in the error (a file name, a key). Throws `StateUnavailableError`.
 */
export function documentAsState(data: unknown, threadId: string, where: string): ThreadState {
  const unavailable = (problem: string) => new StateUnavailableError(`thread state ${where}: ${problem}`);
  if (data === null || typeof data !== "object" || Array.isArray(data)) throw unavailable("does not hold a JSON object");
  const document = data as Partial<ThreadState>;
  if (document.schemaVersion !== THREAD_STATE_SCHEMA_VERSION) {
    const version = document.schemaVersion as unknown;
    throw unavailable(Number.isInteger(version) ? `schemaVersion ${String(version)} is not supported` : "has no numeric schemaVersion");
  }
  if (document.threadId !== threadId) throw unavailable("belongs to another thread (threadId does not match)");
  const problem = schemaProblem(document);
  if (problem) throw unavailable(`is not a valid thread state: ${problem}`);
  return projectThreadState(document as ThreadState);
}

/** Stored bytes as the thread's state: the size cap, fatal UTF-8 decoding and JSON, then `documentAsState`. */
export function bytesAsState(bytes: Uint8Array, threadId: string, where: string): ThreadState {
  if (bytes.byteLength > MAX_THREAD_STATE_BYTES)
    throw new StateUnavailableError(`thread state ${where}: is larger than ${MAX_THREAD_STATE_BYTES} bytes`);
  let data: unknown;
  try {
    data = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch {
    // The parser's message quotes the text; it is deliberately dropped.
    throw new StateUnavailableError(`thread state ${where}: is not valid UTF-8 JSON`);
  }
  return documentAsState(data, threadId, where);
}

/** The basic shape `save` needs before it can even name where the state goes. Throws `StatePersistenceError`. */
export function checkSavable(state: ThreadState): void {
  if (state === null || typeof state !== "object") throw new StatePersistenceError("thread state: not an object");
  if (state.schemaVersion !== THREAD_STATE_SCHEMA_VERSION) throw new StatePersistenceError("thread state: schemaVersion must be 1");
  if (typeof state.threadId !== "string" || state.threadId === "")
    throw new StatePersistenceError("thread state: threadId must be a non-empty string");
}

/**
 * The compact text to store for `state`: projected now (what the caller
 * does to `state` afterwards is not saved), checked with the schema `load`
 * applies on the document that text parses to, so a saved state always
 * loads, and refused when a load would refuse it for its size. The text is
 * serialised once: stringifying the parsed copy again would give the same
 * characters. Throws `StatePersistenceError`.
 */
export function documentText(state: ThreadState, where: string): string {
  let text: string;
  let document: ThreadState;
  try {
    text = JSON.stringify(projectThreadState(state));
    document = JSON.parse(text) as ThreadState;
  } catch (error) {
    throw new StatePersistenceError(`thread state ${where}: not serialisable as JSON`, { cause: error });
  }
  const problem = schemaProblem(document);
  if (problem) throw new StatePersistenceError(`thread state ${where}: refused, not a valid thread state: ${problem}`);
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes > MAX_THREAD_STATE_BYTES)
    throw new StatePersistenceError(`thread state ${where}: would be ${bytes} bytes, larger than ${MAX_THREAD_STATE_BYTES} bytes`);
  return text;
}
