/**
 * The HTTP status of each error code when it is answered before the SSE
 * stream starts (contract §9). Once a stream has started, an error is a
 * `RUN_ERROR` event and has no status. Typed over every code, so a new code
 * does not compile until it has a status here.
 */
import type { ErrorCode } from "../errors.js";

export const HTTP_STATUS: Record<ErrorCode, number> = {
  /** The Host header names no host of this service (the DNS-rebinding guard), checked before the token. */
  HOST_NOT_ALLOWED: 403,
  /** A browser page of an origin that is not allowed, CORS preflights included. */
  ORIGIN_NOT_ALLOWED: 403,
  UNAUTHORIZED: 401,
  /** The request body did not arrive within IAC_CODE_AGUI_BODY_TIMEOUT_S. */
  REQUEST_TIMEOUT: 408,
  UNSUPPORTED_MEDIA_TYPE: 415,
  REQUEST_TOO_LARGE: 413,
  INVALID_JSON: 400,
  INVALID_INPUT: 400,
  NOT_FOUND: 404,
  EXECUTION_NOT_FOUND: 404,
  /** An observer named an execution, invocation or run this thread does not know (subscribe route). */
  OBSERVATION_CONFLICT: 409,
  DUPLICATE_RUN_ID: 409,
  RUN_ID_CONFLICT: 409,
  THREAD_BUSY: 409,
  THREAD_BINDING_CONFLICT: 409,
  RESUME_REQUIRED: 409,
  EXECUTION_LOST: 409,
  /** A guidance run on a thread whose pipeline task is not running (nothing to steer). */
  NO_RUNNING_TASK: 409,
  STATE_UNAVAILABLE: 503,
  /** The service is shutting down and takes no new run; sent with Retry-After. */
  SERVICE_UNAVAILABLE: 503,
  /** IAC_CODE_AGUI_MAX_ACTIVE_RUNS or IAC_CODE_AGUI_MAX_RUNS_PER_USER reached; sent with Retry-After, before the kernel is called. */
  TOO_MANY_RUNS: 429,
  // Codes below normally surface in-stream as RUN_ERROR; the statuses are
  // used only if one escapes before the stream has started.
  INCOMPLETE_RESUME: 400,
  UNKNOWN_INTERRUPT: 400,
  RESUME_PAYLOAD_INVALID: 400,
  RESUME_ALREADY_APPLIED: 409,
  EXECUTION_EXPIRED: 409,
  STATE_PERSISTENCE_FAILED: 500,
  A2A_UNAVAILABLE: 502,
  A2A_PROTOCOL_ERROR: 502,
  A2A_EXECUTION_FAILED: 502,
  SESSION_BACKUP_NOT_READY: 503,
  CANCELLED: 409,
  /** A run still going when the shutdown's drain window ran out. */
  SERVICE_SHUTTING_DOWN: 503,
  INTERNAL_ERROR: 500,
};

export const httpStatusOf = (code: ErrorCode): number => HTTP_STATUS[code];
