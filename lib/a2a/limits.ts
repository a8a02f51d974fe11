/**
 * What the service grants the kernel, in one place. The sizes are settings
 * (`lib/config.ts`); these are their defaults, and what an `A2AClient`
 * built without them uses.
 */

/**
 * Unary calls, and a stream until its response has started
 * (`IAC_CODE_AGUI_KERNEL_REQUEST_TIMEOUT_S`). A stream that has started has
 * no time limit: a task may think for a long time. An hour, as the
 * reference allows: a kernel restoring a session from its backup before a
 * resume (`ensure-restored`) may take minutes, and must not be cut off.
 */
export const DEFAULT_KERNEL_REQUEST_TIMEOUT_S = 3600;
export const DEFAULT_KERNEL_REQUEST_TIMEOUT_MS = DEFAULT_KERNEL_REQUEST_TIMEOUT_S * 1000;

/**
 * How long the kernel may take to start answering a call, its response's
 * headers (`IAC_CODE_AGUI_KERNEL_FIRST_BYTE_TIMEOUT_S`): a kernel that
 * accepted the connection and then says nothing must not hold a run, or a
 * handoff, for the request timeout's hour. A stream that has started, or
 * an answer being read, is held to the request timeout alone. Not for
 * `ensure-restored`, which answers only once a restore, minutes perhaps,
 * is done.
 */
export const DEFAULT_KERNEL_FIRST_BYTE_TIMEOUT_S = 30;

/**
 * One SSE record of a kernel stream (`IAC_CODE_AGUI_MAX_KERNEL_RECORD_BYTES`).
 * A record is one frame; the largest real ones carry an artifact or a
 * pipeline snapshot, far below this.
 */
export const DEFAULT_MAX_KERNEL_RECORD_BYTES = 16 * 1024 * 1024;

/** A non-SSE (JSON) answer of the kernel (`IAC_CODE_AGUI_MAX_KERNEL_RESPONSE_BYTES`): a Task with its history, a task list. */
export const DEFAULT_MAX_KERNEL_RESPONSE_BYTES = 16 * 1024 * 1024;
