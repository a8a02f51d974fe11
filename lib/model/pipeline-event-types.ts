/**
 * The pipeline event registry: a kernel `eventType` in, what the adapter
 * makes of it out (contract §4, R-MAP-4, R-CUS-4, R-SIB-9).
 *
 *   standard    → a signal the normal-mode projectors already turn into
 *                 TEXT_MESSAGE_* / REASONING_* / TOOL_CALL_* / run usage;
 *                 never also CUSTOM
 *   step        → a STEP_STARTED / STEP_FINISHED signal; `custom` says it is
 *                 also allowlisted for CUSTOM `iac-code.pipeline.v1`
 *   custom      → CUSTOM `iac-code.pipeline.v1` only
 *   suppressed  → nothing reaches the client
 *
 * Every known name has a row in one `Record`, so a name added to the lists
 * below fails to compile until it is given a disposition. Names the registry
 * does not know (`dispositionOf`) are suppressed, never fatal.
 */

/** What the kernel puts on the wire (contract §4 "Emitted by the kernel"), grouped as the contract lists them. */
export const KERNEL_EVENT_TYPES = [
  // pipeline
  "pipeline_started",
  "pipeline_resumed",
  "pipeline_warning",
  "mcp_status",
  "backup_blocked",
  "backup_committed",
  "pipeline_completed",
  "pipeline_failed",
  "pipeline_canceled",
  "pipeline_handoff_ready",
  // steps
  "step_started",
  "step_completed",
  "step_failed",
  // candidates
  "candidate_started",
  "candidate_completed",
  "candidate_failed",
  "candidate_step_started",
  "candidate_step_completed",
  "candidate_step_failed",
  "candidate_restart_requested",
  // interrupts and input
  "rollback_completed",
  "input_required",
  "input_received",
  "interrupt_received",
  "interrupt_classified",
  "artifact_created",
  // display
  "message_started",
  "text_delta",
  "thinking_delta",
  "tool_started",
  "tool_result",
  "permission_requested",
  "permission_resolved",
  "message_tombstone",
  "candidate_detail_shown",
  "diagram_shown",
  "tool_progress",
  "stack_progress",
  "stack_instances_progress",
  "stack_current_changed",
  "context_usage",
  "context_compaction_started",
  "context_compacted",
  "context_compaction_failed",
  // cleanup
  "cleanup_started",
  "cleanup_progress",
  "cleanup_completed",
  "cleanup_failed",
] as const;

/**
 * Mapped although the reference kernel does not send them: `usage` is a
 * standard mapping the contract supports (§3), the rest are pipeline-engine
 * names allowlisted defensively (§4).
 */
export const ENGINE_EVENT_TYPES = [
  "usage",
  "candidate_interrupted",
  "candidate_selected",
  "fields_marked_stale",
  "pipeline_error",
  "rollback_triggered",
  "sub_pipeline_completed",
  "sub_pipeline_started",
  "sub_step_failed",
] as const;

export type KnownEventType = (typeof KERNEL_EVENT_TYPES)[number] | (typeof ENGINE_EVENT_TYPES)[number];

export type StandardMapping = "text" | "reasoning" | "tool-start" | "tool-result" | "usage";

export type Disposition =
  | { kind: "standard"; as: StandardMapping }
  | { kind: "step"; phase: "started" | "finished"; custom: boolean }
  | { kind: "custom" }
  | { kind: "suppressed" };

const standard = (as: StandardMapping): Disposition => ({ kind: "standard", as });
const stepStart: Disposition = { kind: "step", phase: "started", custom: false };
const stepFinish = (alsoCustom: boolean): Disposition => ({ kind: "step", phase: "finished", custom: alsoCustom });
const custom: Disposition = { kind: "custom" };
const suppressed: Disposition = { kind: "suppressed" };

const DISPOSITIONS: Readonly<Record<KnownEventType, Disposition>> = {
  text_delta: standard("text"),
  thinking_delta: standard("reasoning"),
  tool_started: standard("tool-start"),
  tool_result: standard("tool-result"),
  usage: standard("usage"),

  step_started: stepStart,
  candidate_step_started: stepStart,
  // An answered input resumes the step it waited in (contract §4 STEP spans).
  input_received: stepStart,
  step_completed: stepFinish(false),
  candidate_step_completed: stepFinish(false),
  step_failed: stepFinish(true),
  candidate_step_failed: stepFinish(true),

  backup_blocked: custom,
  candidate_completed: custom,
  candidate_detail_shown: custom,
  candidate_failed: custom,
  candidate_interrupted: custom,
  candidate_restart_requested: custom,
  candidate_selected: custom,
  candidate_started: custom,
  cleanup_completed: custom,
  cleanup_failed: custom,
  cleanup_progress: custom,
  cleanup_started: custom,
  context_compacted: custom,
  context_compaction_failed: custom,
  context_compaction_started: custom,
  diagram_shown: custom,
  fields_marked_stale: custom,
  mcp_status: custom,
  pipeline_completed: custom,
  pipeline_error: custom,
  pipeline_resumed: custom,
  pipeline_started: custom,
  pipeline_warning: custom,
  rollback_completed: custom,
  rollback_triggered: custom,
  stack_current_changed: custom,
  stack_instances_progress: custom,
  stack_progress: custom,
  sub_pipeline_completed: custom,
  sub_pipeline_started: custom,
  sub_step_failed: custom,
  tool_progress: custom,

  // The task state already ends the run with RUN_ERROR; the business end a client watches is `pipeline_error` (R-MAP-1).
  pipeline_failed: suppressed,
  pipeline_canceled: suppressed,
  // Waits reach the client as the interrupts of RUN_FINISHED, artifacts as `iac-code.artifact.v1`: not twice.
  input_required: suppressed,
  permission_requested: suppressed,
  artifact_created: suppressed,
  // Kernel bookkeeping: nothing a client renders or acts on.
  pipeline_handoff_ready: suppressed,
  backup_committed: suppressed,
  interrupt_received: suppressed,
  interrupt_classified: suppressed,
  permission_resolved: suppressed,
  message_started: suppressed,
  message_tombstone: suppressed,
  context_usage: suppressed,
};

export const KNOWN_EVENT_TYPES: ReadonlySet<string> = new Set(Object.keys(DISPOSITIONS));

/** One lookup per envelope, not a set's and then the registry's: every pipeline event asks. */
const DISPOSITION_BY_TYPE: ReadonlyMap<string, Disposition> = new Map(Object.entries(DISPOSITIONS));

export function dispositionOf(eventType: unknown): Disposition {
  return (typeof eventType === "string" ? DISPOSITION_BY_TYPE.get(eventType) : undefined) ?? suppressed;
}

/** Whether the envelope itself goes out as CUSTOM `iac-code.pipeline.v1`. */
export const isCustom = (disposition: Disposition): boolean =>
  disposition.kind === "custom" || (disposition.kind === "step" && disposition.custom);

/** The CUSTOM allowlist (contract §4: exactly 34 names), sorted; read off the registry so the two cannot disagree. */
export const CUSTOM_EVENT_TYPES: readonly KnownEventType[] = (Object.keys(DISPOSITIONS) as KnownEventType[])
  .filter((eventType) => isCustom(DISPOSITIONS[eventType]))
  .sort();
