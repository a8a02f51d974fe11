/**
 * What the service grants the kernel, in one place. The sizes are settings
 * (`lib/config.ts`); these are their defaults, and what an `A2AClient`
 * built without them uses.
 */

/**
 * Unary calls, and a stream until its response has started. A stream that
 * has started has no time limit: a task may think for a long time.
 */
export const DEFAULT_KERNEL_REQUEST_TIMEOUT_MS = 30_000;

/**
 * One SSE record of a kernel stream (`IAC_CODE_AGUI_MAX_KERNEL_RECORD_BYTES`).
 * A record is one frame; the largest real ones carry an artifact or a
 * pipeline snapshot, far below this.
 */
export const DEFAULT_MAX_KERNEL_RECORD_BYTES = 16 * 1024 * 1024;

/** A non-SSE (JSON) answer of the kernel (`IAC_CODE_AGUI_MAX_KERNEL_RESPONSE_BYTES`): a Task with its history, a task list. */
export const DEFAULT_MAX_KERNEL_RESPONSE_BYTES = 16 * 1024 * 1024;
