/**
 * Pipeline recovery in the demo kernel (wire contract §1, §6):
 *
 *   GET <base>/iac-code/pipeline/state?taskId=<id>&afterSequence=<n>[&includeSnapshot=false]
 *   → 200 {snapshot, events: [<envelopes with sequence > n, in order>]}
 *   → 404 for an unknown task, or one that never published a pipeline envelope
 *
 * `PipelineLog` keeps, per task, every envelope the replay published in a
 * status update's `metadata.iac_code` (`pipelineBatch.events` first, then
 * `pipeline`, the order the adapter maps them in), as the live ids made
 * them. An envelope whose `eventId` was logged already is a re-send: the
 * kernel's journal holds each event once, so recovery returns it once.
 */
import type { RequestHandler } from "express";
import type { PendingInputs } from "./interrupts.js";
import { snapshotOf, type Envelope } from "./pipeline-snapshot.js";
import { isJsonObject } from "../model/json.js";

/** The pipeline envelopes a status update's metadata carries, in mapping order. */
export function envelopesOf(metadata: unknown): Envelope[] {
  const iacCode = isJsonObject(metadata) ? metadata.iac_code : undefined;
  if (!isJsonObject(iacCode)) return [];
  const batch = isJsonObject(iacCode.pipelineBatch) && Array.isArray(iacCode.pipelineBatch.events) ? iacCode.pipelineBatch.events : [];
  return [...batch, iacCode.pipeline].filter(isJsonObject);
}

interface TaskLog {
  contextId: string;
  envelopes: Envelope[];
  eventIds: Set<string>;
  /** Bumped whenever the task publishes a new envelope. */
  version: number;
}

export class PipelineLog {
  private readonly tasks = new Map<string, TaskLog>();

  /** Notes the envelopes of a status update the kernel is about to publish. */
  record(ids: { taskId: string; contextId: string }, metadata: unknown): void {
    for (const envelope of envelopesOf(metadata)) {
      const log = this.tasks.get(ids.taskId) ?? { contextId: ids.contextId, envelopes: [], eventIds: new Set<string>(), version: 0 };
      this.tasks.set(ids.taskId, log);
      const eventId = typeof envelope.eventId === "string" ? envelope.eventId : undefined;
      if (eventId !== undefined && log.eventIds.has(eventId)) continue;
      if (eventId !== undefined) log.eventIds.add(eventId);
      log.envelopes.push(structuredClone(envelope));
      log.version++;
    }
  }

  /** The envelopes published for the task, in order; undefined if it published none. */
  envelopes(taskId: string): Envelope[] | undefined {
    return this.tasks.get(taskId)?.envelopes.map((envelope) => structuredClone(envelope));
  }

  /** The recovery response; undefined if the task published no envelope. */
  state(taskId: string, afterSequence: number, includeSnapshot: boolean, pending: PendingInputs) {
    const log = this.tasks.get(taskId);
    if (!log) return undefined;
    const events = log.envelopes.filter((envelope) => typeof envelope.sequence === "number" && envelope.sequence > afterSequence);
    const snapshot = includeSnapshot
      ? snapshotOf(log.envelopes, {
          taskId,
          contextId: log.contextId,
          pendingInput: pending.input(taskId),
          pendingPermissions: pending.permissionList(taskId),
          snapshotVersion: log.version,
        })
      : null;
    return structuredClone({ snapshot, events });
  }
}

/** The recovery route's handler; the caller mounts it at `/iac-code/pipeline/state`. */
export function pipelineStateRoute(log: PipelineLog, pending: PendingInputs): RequestHandler {
  return (req, res) => {
    const { taskId, afterSequence = "0", includeSnapshot = "true" } = req.query;
    const refuse = (message: string) => res.status(400).json({ error: { code: "INVALID_ARGUMENT", message } });
    if (typeof taskId !== "string" || taskId === "") return void refuse("taskId is required.");
    const after = typeof afterSequence === "string" && afterSequence.trim() !== "" ? Number(afterSequence) : NaN;
    if (!Number.isInteger(after) || after < 0) return void refuse("afterSequence must be an integer ≥ 0.");
    if (includeSnapshot !== "true" && includeSnapshot !== "false") return void refuse("includeSnapshot must be true or false.");
    const state = log.state(taskId, after, includeSnapshot === "true", pending);
    if (!state) {
      return void res.status(404).json({ error: { code: "PIPELINE_STATE_NOT_FOUND", message: `No pipeline state for task ${taskId}.` } });
    }
    res.json(state);
  };
}
