/**
 * The recovery snapshot of a pipeline run (wire contract §6), folded from
 * the envelopes the kernel published for its task, in order.
 *
 * The real kernel keeps this read model as its engine runs; the demo
 * kernel has only the recorded envelopes, so it derives a plausible one
 * from them: the steps with their candidates and status, what was shown
 * (text per message, tool results, permissions, diagrams, artifacts), the
 * stacks, the cleanup, and the bookkeeping an adapter resumes from
 * (`pipelineRunId`, `lastSequence`, `seenEventIds`). The adapter passes the
 * snapshot on verbatim (ACTIVITY_SNAPSHOT) and reads only `pipelineRunId`
 * and `lastSequence` itself.
 */
import { isJsonObject, type JsonObject } from "../model/json.js";

export type Envelope = Record<string, unknown>;

export const SNAPSHOT_SCHEMA_VERSION = "1.1";

type RunStatus = "running" | "waiting_input" | "completed" | "failed" | "canceled";

interface StepView {
  id: string;
  runId: string | null;
  attempt: number | null;
  index: number | null;
  total: number | null;
  type: string | null;
  uiMode: string | null;
  status: RunStatus;
  startedAt: string | null;
  finishedAt: string | null;
  error: unknown;
  selectedCandidateId: string | null;
  candidates: CandidateView[];
}

interface CandidateView {
  id: string;
  runId: string | null;
  index: number | null;
  attempt: number | null;
  name: string | null;
  pipelineName: string | null;
  totalSteps: number | null;
  status: RunStatus;
  selected: boolean;
  startedAt: string | null;
  finishedAt: string | null;
  steps: CandidateStepView[];
}

interface CandidateStepView {
  id: string;
  runId: string | null;
  attempt: number | null;
  index: number | null;
  total: number | null;
  status: RunStatus;
  startedAt: string | null;
  finishedAt: string | null;
}

interface MessageView {
  id: string;
  scope: string;
  stepId: string | null;
  candidateId: string | null;
  candidateStepId: string | null;
  text: string;
  thinking: string;
  firstSequence: number;
  lastSequence: number;
}

export interface SnapshotContext {
  taskId: string;
  contextId: string;
  /** The input the task is parked on, if any (the kernel's own `pendingInput`). */
  pendingInput: JsonObject | undefined;
  /** The sub-pipeline permissions it still waits on. */
  pendingPermissions: JsonObject[] | undefined;
  /** Bumped by the caller each time the task published something new. */
  snapshotVersion: number;
  now?: Date;
}

const str = (value: unknown): string | null => (typeof value === "string" ? value : null);
const num = (value: unknown): number | null => (typeof value === "number" && Number.isFinite(value) ? value : null);
const objectAt = (envelope: Envelope, key: string): JsonObject | undefined =>
  isJsonObject(envelope[key]) ? (envelope[key] as JsonObject) : undefined;
const dataOf = (envelope: Envelope): JsonObject => objectAt(envelope, "data") ?? {};

const FINISHED: Record<string, RunStatus> = { completed: "completed", failed: "failed", canceled: "canceled" };

/** A message's coordinates, as the adapter builds its pipeline message ids: candidate, candidate step, step (runId, else id). */
function messageKey(envelope: Envelope): string {
  const scope = str(envelope.scope) ?? "pipeline";
  const coordinates: string[] = [];
  for (const key of ["candidate", "candidateStep", "step"]) {
    const part = objectAt(envelope, key);
    const coordinate = str(part?.runId) ?? str(part?.id);
    if (coordinate !== null && !coordinates.includes(coordinate)) coordinates.push(coordinate);
  }
  return [scope, ...coordinates].join(":");
}

export function snapshotOf(envelopes: readonly Envelope[], context: SnapshotContext): JsonObject {
  const steps = new Map<string, StepView>();
  const messages = new Map<string, MessageView>();
  const toolResults: JsonObject[] = [];
  const permissions = new Map<string, JsonObject>();
  const diagrams: JsonObject[] = [];
  const candidateDetails: JsonObject[] = [];
  const artifacts: JsonObject[] = [];
  const stacks = new Map<string, JsonObject>();
  let cleanup: JsonObject | null = null;
  let lastSequence = 0;
  let last: Envelope | undefined;

  const stepOf = (envelope: Envelope): StepView | undefined => {
    const step = objectAt(envelope, "step");
    const id = str(step?.id);
    if (!step || id === null) return undefined;
    let view = steps.get(id);
    if (!view) {
      view = {
        id,
        runId: null,
        attempt: null,
        index: null,
        total: null,
        type: null,
        uiMode: null,
        status: "running",
        startedAt: null,
        finishedAt: null,
        error: null,
        selectedCandidateId: null,
        candidates: [],
      };
      steps.set(id, view);
    }
    view.runId = str(step.runId) ?? view.runId;
    view.attempt = num(step.attempt) ?? view.attempt;
    view.index = num(step.index) ?? view.index;
    view.total = num(step.total) ?? view.total;
    view.type = str(step.type) ?? view.type;
    view.uiMode = str(step.uiMode) ?? view.uiMode;
    return view;
  };

  const candidateOf = (envelope: Envelope): CandidateView | undefined => {
    const candidate = objectAt(envelope, "candidate");
    const id = str(candidate?.id);
    const step = stepOf(envelope);
    if (!candidate || id === null || !step) return undefined;
    let view = step.candidates.find((c) => c.id === id);
    if (!view) {
      view = {
        id,
        runId: null,
        index: null,
        attempt: null,
        name: null,
        pipelineName: null,
        totalSteps: null,
        status: "running",
        selected: false,
        startedAt: null,
        finishedAt: null,
        steps: [],
      };
      step.candidates.push(view);
    }
    view.runId = str(candidate.runId) ?? view.runId;
    view.index = num(candidate.index) ?? view.index;
    view.attempt = num(candidate.attempt) ?? view.attempt;
    view.name = str(candidate.name) ?? view.name;
    view.pipelineName = str(candidate.pipelineName) ?? view.pipelineName;
    view.totalSteps = num(candidate.totalSteps) ?? view.totalSteps;
    return view;
  };

  const candidateStepOf = (envelope: Envelope): CandidateStepView | undefined => {
    const candidateStep = objectAt(envelope, "candidateStep");
    const id = str(candidateStep?.id);
    const candidate = candidateOf(envelope);
    if (!candidateStep || id === null || !candidate) return undefined;
    let view = candidate.steps.find((s) => s.id === id);
    if (!view) {
      view = { id, runId: null, attempt: null, index: null, total: null, status: "running", startedAt: null, finishedAt: null };
      candidate.steps.push(view);
    }
    view.runId = str(candidateStep.runId) ?? view.runId;
    view.attempt = num(candidateStep.attempt) ?? view.attempt;
    view.index = num(candidateStep.index) ?? view.index;
    view.total = num(candidateStep.total) ?? view.total;
    return view;
  };

  const located = (envelope: Envelope): JsonObject => ({
    stepId: str(objectAt(envelope, "step")?.id),
    candidateId: str(objectAt(envelope, "candidate")?.id),
    candidateStepId: str(objectAt(envelope, "candidateStep")?.id),
    sequence: num(envelope.sequence),
  });

  for (const envelope of envelopes) {
    last = envelope;
    const sequence = num(envelope.sequence) ?? 0;
    lastSequence = Math.max(lastSequence, sequence);
    const at = str(envelope.createdAt);
    const data = dataOf(envelope);
    switch (envelope.eventType) {
      case "step_started": {
        const step = stepOf(envelope);
        if (step) Object.assign(step, { status: "running", startedAt: step.startedAt ?? at, finishedAt: null });
        break;
      }
      case "input_received": {
        const step = stepOf(envelope);
        if (step) step.status = "running";
        const candidateStep = candidateStepOf(envelope);
        if (candidateStep) candidateStep.status = "running";
        const candidate = candidateOf(envelope);
        if (candidate) candidate.status = "running";
        break;
      }
      case "step_completed":
      case "step_failed": {
        const step = stepOf(envelope);
        if (step) {
          step.status = envelope.eventType === "step_completed" ? "completed" : "failed";
          step.finishedAt = at;
          if (envelope.eventType === "step_failed") step.error = data.error ?? null;
        }
        break;
      }
      case "candidate_started":
      case "candidate_completed":
      case "candidate_failed": {
        const candidate = candidateOf(envelope);
        if (!candidate) break;
        if (envelope.eventType === "candidate_started") Object.assign(candidate, { status: "running", startedAt: at });
        else Object.assign(candidate, { status: envelope.eventType === "candidate_completed" ? "completed" : "failed", finishedAt: at });
        break;
      }
      case "candidate_step_started":
      case "candidate_step_completed":
      case "candidate_step_failed": {
        const candidateStep = candidateStepOf(envelope);
        if (!candidateStep) break;
        if (envelope.eventType === "candidate_step_started") Object.assign(candidateStep, { status: "running", startedAt: at });
        else
          Object.assign(candidateStep, {
            status: envelope.eventType === "candidate_step_completed" ? "completed" : "failed",
            finishedAt: at,
          });
        break;
      }
      case "candidate_selected": {
        const step = stepOf(envelope);
        const selected = str(data.candidateId);
        if (step && selected !== null) {
          step.selectedCandidateId = selected;
          for (const candidate of step.candidates) candidate.selected = candidate.id === selected;
        }
        break;
      }
      case "text_delta":
      case "thinking_delta": {
        candidateStepOf(envelope);
        const key = messageKey(envelope);
        const message = messages.get(key) ?? {
          id: key,
          scope: str(envelope.scope) ?? "pipeline",
          stepId: str(objectAt(envelope, "step")?.id),
          candidateId: str(objectAt(envelope, "candidate")?.id),
          candidateStepId: str(objectAt(envelope, "candidateStep")?.id),
          text: "",
          thinking: "",
          firstSequence: sequence,
          lastSequence: sequence,
        };
        const text = str(data.text) ?? "";
        if (envelope.eventType === "text_delta") message.text += text;
        else message.thinking += text;
        message.lastSequence = sequence;
        messages.set(key, message);
        break;
      }
      case "tool_result":
        toolResults.push({ ...located(envelope), ...data });
        break;
      case "permission_requested": {
        const permission = objectAt(envelope, "permission") ?? data;
        const inputId = str(permission.inputId);
        if (inputId !== null) permissions.set(inputId, { ...located(envelope), status: "pending", permission });
        break;
      }
      case "permission_resolved": {
        const inputId = str(data.inputId);
        const known = inputId === null ? undefined : permissions.get(inputId);
        if (known) permissions.set(inputId!, { ...known, status: "resolved", decision: data.decision ?? null });
        break;
      }
      case "diagram_shown":
        diagrams.push({ ...located(envelope), ...data });
        break;
      case "candidate_detail_shown":
        candidateDetails.push({ ...located(envelope), ...data });
        break;
      case "artifact_created":
        artifacts.push({ ...located(envelope), ...(objectAt(envelope, "artifact") ?? data) });
        break;
      case "stack_progress":
      case "stack_instances_progress":
      case "stack_current_changed": {
        const key = str(data.stackName) ?? str(data.stackId) ?? "stack";
        stacks.set(key, { ...stacks.get(key), ...located(envelope), ...data, updatedAt: at });
        break;
      }
      case "cleanup_started":
        cleanup = { status: "running", startedAt: at, finishedAt: null, progress: null, ...data };
        break;
      case "cleanup_progress":
        cleanup = { ...(cleanup ?? { status: "running", startedAt: at, finishedAt: null }), progress: data };
        break;
      case "cleanup_completed":
      case "cleanup_failed":
        cleanup = {
          ...(cleanup ?? { startedAt: null }),
          ...data,
          status: envelope.eventType === "cleanup_completed" ? "completed" : "failed",
          finishedAt: at,
        };
        break;
    }
  }

  // A finished pipeline leaves no step or candidate running; a failed or
  // canceled run ends the ones still open with it.
  const finished = FINISHED[str(last?.status) ?? ""];
  if (finished) {
    for (const step of steps.values()) {
      if (step.status === "running" || step.status === "waiting_input") step.status = finished;
      for (const candidate of step.candidates) {
        if (candidate.status === "running") candidate.status = finished;
        for (const candidateStep of candidate.steps) if (candidateStep.status === "running") candidateStep.status = finished;
      }
    }
  }
  const pendingInput = context.pendingInput ?? null;
  // The step a parked task waits in.
  const waitingStep = [...steps.values()].filter((step) => step.status === "running").at(-1);
  if (pendingInput && waitingStep) waitingStep.status = "waiting_input";
  for (const projection of context.pendingPermissions ?? []) {
    const inputId = str(projection.inputId);
    if (inputId !== null && !permissions.has(inputId)) permissions.set(inputId, { status: "pending", permission: projection });
  }

  const status = str(last?.status) ?? "working";
  return {
    schemaVersion: SNAPSHOT_SCHEMA_VERSION,
    snapshotVersion: context.snapshotVersion,
    pipelineRunId: str(last?.pipelineRunId),
    taskId: context.taskId,
    contextId: context.contextId,
    pipelineName: str(last?.pipelineName),
    status,
    lastSequence,
    generatedAt: (context.now ?? new Date()).toISOString(),
    steps: [...steps.values()],
    display: {
      messages: [...messages.values()],
      diagrams,
      candidateDetails,
      artifacts,
      permissions: [...permissions.values()],
      toolResults,
    },
    stacks: [...stacks.values()],
    cleanup,
    normalHandoff: null,
    pendingNormalHandoff: null,
    pendingTerminal: null,
    pendingInput,
    control: {
      cancelable: !finished,
      waitingForInput: pendingInput !== null || (context.pendingPermissions?.length ?? 0) > 0,
    },
    seenEventIds: envelopes.map((envelope) => envelope.eventId).filter((id): id is string => typeof id === "string"),
  };
}
