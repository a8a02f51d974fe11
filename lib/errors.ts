/**
 * The one error type of the service. It carries a documented code (wire
 * contract §9) and the values its message needs; the text is chosen at the
 * edge, in the request's language (see `i18n/`), never here.
 */

/** Every documented error code (contract §9); `lib/http/http-status.ts` gives each its HTTP status. */
export const ERROR_CODES = [
  "HOST_NOT_ALLOWED",
  "ORIGIN_NOT_ALLOWED",
  "UNAUTHORIZED",
  "REQUEST_TIMEOUT",
  "UNSUPPORTED_MEDIA_TYPE",
  "REQUEST_TOO_LARGE",
  "INVALID_JSON",
  "INVALID_INPUT",
  "NOT_FOUND",
  "EXECUTION_NOT_FOUND",
  "OBSERVATION_CONFLICT",
  "DUPLICATE_RUN_ID",
  "RUN_ID_CONFLICT",
  "THREAD_BUSY",
  "THREAD_BINDING_CONFLICT",
  "RESUME_REQUIRED",
  "EXECUTION_LOST",
  "NO_RUNNING_TASK",
  "STATE_UNAVAILABLE",
  "SERVICE_UNAVAILABLE",
  "TOO_MANY_RUNS",
  "INCOMPLETE_RESUME",
  "UNKNOWN_INTERRUPT",
  "RESUME_PAYLOAD_INVALID",
  "RESUME_ALREADY_APPLIED",
  "EXECUTION_EXPIRED",
  "STATE_PERSISTENCE_FAILED",
  "A2A_UNAVAILABLE",
  "A2A_PROTOCOL_ERROR",
  "A2A_EXECUTION_FAILED",
  "SESSION_BACKUP_NOT_READY",
  "CANCELLED",
  "SERVICE_SHUTTING_DOWN",
  "INTERNAL_ERROR",
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** Named values a message template may interpolate, e.g. `{detail}`. */
export type MessageParams = Readonly<Record<string, string | number>>;

/**
 * Data an HTTP error answer carries beside its code and message, for the
 * client to act on (RESUME_REQUIRED names the interrupts to answer). It is
 * JSON-safe data built at the edge, never text to translate, and it cannot
 * replace the code or the message.
 */
export type ErrorDetails = Readonly<Record<string, unknown>> & { code?: never; message?: never };

export class AguiError extends Error {
  readonly details: ErrorDetails | undefined;
  /** When a client may try again, in seconds (HTTP `Retry-After`): a refusal that passes with time. */
  readonly retryAfterS: number | undefined;

  constructor(
    readonly code: ErrorCode,
    readonly params: MessageParams = {},
    options?: { cause?: unknown; details?: ErrorDetails; retryAfterS?: number },
  ) {
    super(code, options);
    this.name = "AguiError";
    this.details = options?.details;
    this.retryAfterS = options?.retryAfterS;
  }
}

/**
 * When a client refused THREAD_BUSY may try again: the common case is Stop
 * then a new message, and the stopped run lets go of its thread within
 * about a second.
 */
export const THREAD_BUSY_RETRY_AFTER_S = 1;

/** Anything thrown becomes an AguiError; unknown failures keep their cause for logs. */
export function toAguiError(error: unknown, fallback: ErrorCode = "INTERNAL_ERROR"): AguiError {
  return error instanceof AguiError ? error : new AguiError(fallback, {}, { cause: error });
}
