/**
 * The one error type of the service. It carries a documented code (wire
 * contract §9) and the values its message needs; the text is chosen at the
 * edge, in the request's language (see `i18n/`), never here.
 */

/** HTTP status of each code when it is answered before the SSE stream starts. */
export const HTTP_STATUS = {
  UNAUTHORIZED: 401,
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
  STATE_UNAVAILABLE: 503,
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
  INTERNAL_ERROR: 500,
} as const;

export type ErrorCode = keyof typeof HTTP_STATUS;

/** Named values a message template may interpolate, e.g. `{detail}`. */
export type MessageParams = Readonly<Record<string, string | number>>;

export class AguiError extends Error {
  readonly httpStatus: number;

  constructor(
    readonly code: ErrorCode,
    readonly params: MessageParams = {},
    options?: { cause?: unknown },
  ) {
    super(code, options);
    this.name = "AguiError";
    this.httpStatus = HTTP_STATUS[code];
  }
}

/** Anything thrown becomes an AguiError; unknown failures keep their cause for logs. */
export function toAguiError(error: unknown, fallback: ErrorCode = "INTERNAL_ERROR"): AguiError {
  return error instanceof AguiError ? error : new AguiError(fallback, {}, { cause: error });
}
