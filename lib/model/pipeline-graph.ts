/**
 * The pipeline as a graph a view can draw (docs/pipeline-feed.md, "The
 * read-model"): its steps in plan order, each pending, running, done,
 * failed or skipped, and a parallel step's candidates side by side with
 * their own steps. `reducePipelineGraph` folds it from the AG-UI events of
 * the feed: the plan from `pipeline_started`, step spans by their facts
 * (`step-facts.ts`), candidates from their CUSTOM events, and the kernel's
 * recovery snapshot (ACTIVITY_SNAPSHOT) for what a stream did not see.
 *
 * Every fact is set, never toggled, so folding an event twice leaves the
 * graph as once: a view that attached late and replays what it missed on
 * top of the graph it was handed ends where a view that watched does. And
 * nothing goes back: within one attempt a step only moves on (pending,
 * running, then how it ended), a candidate within one run of it, the
 * pipeline within one pipeline run, so an event older than what the graph
 * shows (a replayed start of a step done since) changes nothing a view
 * has drawn. A step's `durationMs` is its `finishedAt − startedAt`
 * (`stepDuration`), as on its events. It is pure and returns the same object for an event that changes nothing,
 * since the thread status runs it on every event of every run.
 *
 * The sandbox page folds its graphs with this very module, compiled and
 * served as it is (`sandbox-route.ts`), so the page and the service cannot
 * draw a run differently. That is why it imports only types and its two
 * browser-safe siblings, and names event types by their string values.
 */
import type { AGUIEvent } from "@ag-ui/core";
import { isJsonObject, nonEmptyString, type JsonObject } from "./json.js";
import { stepDuration, stepFactsFrom, type StepFacts } from "./step-facts.js";

export type StepStatus = "pending" | "running" | "done" | "failed" | "skipped";
export type CandidateStatus = "running" | "done" | "failed";
export type PipelineStatus = "idle" | "running" | "completed" | "failed";

export interface StepNode {
  key: string;
  id: string;
  type: string | null;
  title: string | null;
  index: number | null;
  status: StepStatus;
  attempt: number | null;
  stepRunId: string | null;
  startedAt: string | null;
  finishedAt: string | null;
  durationMs: number | null;
  error: { code?: string; message?: string } | null;
}

export interface CandidateNode {
  id: string;
  runId: string | null;
  index: number | null;
  name: string | null;
  status: CandidateStatus;
  selected: boolean;
  steps: StepNode[];
}

export interface PipelineStepNode extends StepNode {
  selectedCandidateId: string | null;
  candidates: CandidateNode[];
}

export interface PipelineGraph {
  pipelineRunId: string | null;
  name: string | null;
  status: PipelineStatus;
  steps: PipelineStepNode[];
}

export const PIPELINE_ACTIVITY = "iac-code.pipeline.v1";

/** How far each status is along: a node never shows a lower one than it showed, within one attempt or run. */
const STEP_PROGRESS: Readonly<Record<StepStatus, number>> = { pending: 0, running: 1, done: 2, failed: 2, skipped: 2 };
const CANDIDATE_PROGRESS: Readonly<Record<CandidateStatus, number>> = { running: 0, done: 1, failed: 1 };
const PIPELINE_PROGRESS: Readonly<Record<PipelineStatus, number>> = { idle: 0, running: 1, completed: 2, failed: 2 };

/** `next`, unless it is behind `now`. */
const onward = <S extends string>(progress: Readonly<Record<S, number>>, now: S, next: S): S =>
  progress[next] < progress[now] ? now : next;

export const emptyPipelineGraph = (): PipelineGraph => ({ pipelineRunId: null, name: null, status: "idle", steps: [] });

const num = (value: unknown): number | null => (typeof value === "number" && Number.isFinite(value) ? value : null);
const str = (value: unknown): string | null => nonEmptyString(value) ?? null;
const objectAt = (value: JsonObject, key: string): JsonObject | undefined => (isJsonObject(value[key]) ? value[key] : undefined);
const listAt = (value: JsonObject, key: string): unknown[] => (Array.isArray(value[key]) ? value[key] : []);

const stepNode = (key: string, id: string): StepNode => ({
  key,
  id,
  type: null,
  title: null,
  index: null,
  status: "pending",
  attempt: null,
  stepRunId: null,
  startedAt: null,
  finishedAt: null,
  durationMs: null,
  error: null,
});

/** `nodes` with the one `id` names replaced by `update(it)` (or a new one, `create()`), in `index` order. */
function upsert<T extends { id: string; index: number | null }>(
  nodes: readonly T[],
  id: string,
  create: () => T,
  update: (node: T) => T,
): T[] {
  const at = nodes.findIndex((node) => node.id === id);
  const next = at === -1 ? [...nodes, update(create())] : nodes.map((node, i) => (i === at ? update(node) : node));
  // A stable sort: nodes with no index keep their place after the indexed ones.
  return next.sort((a, b) => (a.index ?? Number.MAX_SAFE_INTEGER) - (b.index ?? Number.MAX_SAFE_INTEGER));
}

const withStep = (graph: PipelineGraph, id: string, update: (step: PipelineStepNode) => PipelineStepNode): PipelineGraph => ({
  ...graph,
  steps: upsert(graph.steps, id, () => ({ ...stepNode(`step:${id}`, id), selectedCandidateId: null, candidates: [] }), update),
});

const candidateNode = (id: string): CandidateNode => ({
  id,
  runId: null,
  index: null,
  name: null,
  status: "running",
  selected: false,
  steps: [],
});

const withCandidate = (step: PipelineStepNode, id: string, update: (candidate: CandidateNode) => CandidateNode): PipelineStepNode => ({
  ...step,
  candidates: upsert(step.candidates, id, () => candidateNode(id), update),
});

/** The step that runs candidate `candidateId`: named by the facts, else the one that has it already. */
function parentStepId(graph: PipelineGraph, facts: StepFacts): string | undefined {
  const parent = facts.parent!;
  return parent.stepId ?? graph.steps.find((step) => step.candidates.some((candidate) => candidate.id === parent.candidateId))?.id;
}

/** A step's node after one of its spans: the facts it carries, the status its outcome says, never an earlier one. */
function spanned<T extends StepNode>(node: T, facts: StepFacts, phase: "started" | "finished"): T {
  // A span of an earlier attempt than the one drawn is history the graph is past.
  if (facts.attempt !== undefined && node.attempt !== null && facts.attempt < node.attempt) return node;
  const next = { ...node, type: facts.type ?? node.type, title: facts.title ?? node.title, index: facts.index ?? node.index };
  const attempt = facts.attempt ?? node.attempt;
  const newAttempt = attempt !== node.attempt || (facts.stepRunId !== undefined && facts.stepRunId !== node.stepRunId);
  Object.assign(next, { attempt, stepRunId: facts.stepRunId ?? node.stepRunId, startedAt: facts.startedAt ?? node.startedAt });
  if (phase === "started") {
    // A new attempt starts clean; a start of the attempt drawn (reopened, or replayed) moves a pending step on, no other.
    if (newAttempt)
      return { ...next, status: "running", startedAt: facts.startedAt ?? null, finishedAt: null, durationMs: null, error: null };
    return { ...next, status: onward(STEP_PROGRESS, node.status, "running") };
  }
  const status: StepStatus | undefined =
    facts.outcome === "completed" ? "done" : facts.outcome === "failed" ? "failed" : facts.outcome === "skipped" ? "skipped" : undefined;
  if (status === undefined) return next; // run-ended: the span closed with the run, the step did not
  const finishedAt = facts.finishedAt ?? null;
  const durationMs = stepDuration(next.startedAt, finishedAt) ?? null;
  return { ...next, status, finishedAt, durationMs, error: facts.error ?? null };
}

function foldSpan(graph: PipelineGraph, facts: StepFacts, phase: "started" | "finished"): PipelineGraph {
  if (facts.parent === undefined) return withStep(graph, facts.stepId, (step) => spanned(step, facts, phase));
  const stepId = parentStepId(graph, facts);
  if (stepId === undefined) return graph;
  const { candidateId, candidateRunId, candidateIndex, candidateName } = facts.parent;
  return withStep(graph, stepId, (step) =>
    withCandidate(step, candidateId, (candidate) => ({
      ...candidate,
      runId: candidateRunId ?? candidate.runId,
      index: candidateIndex ?? candidate.index,
      name: candidateName ?? candidate.name,
      steps: upsert(
        candidate.steps,
        facts.stepId,
        () => stepNode(facts.key, facts.stepId),
        (node) => spanned(node, facts, phase),
      ),
    })),
  );
}

/** The candidate an envelope names, under the step it names, now `status` (never back, unless it is a new run of it). */
function foldCandidate(graph: PipelineGraph, envelope: JsonObject, status: CandidateStatus): PipelineGraph {
  const stepId = str(objectAt(envelope, "step")?.id);
  const candidate = objectAt(envelope, "candidate") ?? {};
  const candidateId = str(candidate.id) ?? str(objectAt(envelope, "data")?.subPipelineId) ?? str(candidate.runId);
  if (stepId === null || candidateId === null) return graph;
  const planned = listAt(candidate, "steps").flatMap((step, index) => {
    const id = typeof step === "string" ? step : isJsonObject(step) ? str(step.id) : null;
    return id === null ? [] : [{ ...stepNode(`candidate:${candidateId}:${id}`, id), index }];
  });
  return withStep(graph, stepId, (step) =>
    withCandidate(step, candidateId, (node) => {
      const runId = str(candidate.runId) ?? node.runId;
      const rerun = node.runId !== null && runId !== node.runId;
      return {
        ...node,
        status: rerun ? status : onward(CANDIDATE_PROGRESS, node.status, status),
        runId,
        index: num(candidate.index) ?? node.index,
        name: str(candidate.name) ?? node.name,
        steps: planned.reduce(
          (steps, plannedStep) =>
            upsert(
              steps,
              plannedStep.id,
              () => plannedStep,
              (known) => known,
            ),
          node.steps,
        ),
      };
    }),
  );
}

function foldEnvelope(graph: PipelineGraph, envelope: JsonObject): PipelineGraph {
  const data = objectAt(envelope, "data") ?? {};
  switch (envelope.eventType) {
    case "pipeline_started": {
      const runId = str(envelope.pipelineRunId);
      // Another pipeline run on the thread draws a new graph.
      const base = runId !== null && graph.pipelineRunId !== null && runId !== graph.pipelineRunId ? emptyPipelineGraph() : graph;
      const planned = listAt(data, "steps").flatMap((step, index) =>
        isJsonObject(step) && str(step.id) !== null ? [{ step, index }] : [],
      );
      return planned.reduce<PipelineGraph>(
        (next, { step, index }) =>
          withStep(next, str(step.id)!, (node) => ({ ...node, type: node.type ?? str(step.type), index: node.index ?? index })),
        {
          ...base,
          pipelineRunId: runId ?? base.pipelineRunId,
          name: str(data.pipelineName) ?? str(envelope.pipelineName) ?? base.name,
          status: onward(PIPELINE_PROGRESS, base.status, "running"),
        } satisfies PipelineGraph,
      );
    }
    case "pipeline_resumed":
      return { ...graph, status: onward(PIPELINE_PROGRESS, graph.status, "running") };
    case "pipeline_completed":
      return { ...graph, status: "completed" };
    case "pipeline_error":
      return { ...graph, status: "failed" };
    case "candidate_started":
      return foldCandidate(graph, envelope, "running");
    case "candidate_completed":
      return foldCandidate(graph, envelope, "done");
    case "candidate_failed":
      return foldCandidate(graph, envelope, "failed");
    case "candidate_selected": {
      const stepId = str(objectAt(envelope, "step")?.id);
      const chosen = str(data.candidateId);
      if (stepId === null || chosen === null) return graph;
      return withStep(graph, stepId, (step) => ({
        ...step,
        selectedCandidateId: chosen,
        candidates: step.candidates.map((candidate) => ({ ...candidate, selected: candidate.id === chosen })),
      }));
    }
    default:
      return graph;
  }
}

// `canceled` marks what was open when the pipeline was canceled: it started and did not complete, so it failed.
// `skipped` is kept for a step completed without running (a denied deployment).
const SNAPSHOT_STEP_STATUS: Readonly<Record<string, StepStatus>> = {
  running: "running",
  waiting_input: "running",
  completed: "done",
  failed: "failed",
  canceled: "failed",
  skipped: "skipped",
};
const SNAPSHOT_CANDIDATE_STATUS: Readonly<Record<string, CandidateStatus>> = {
  running: "running",
  waiting_input: "running",
  completed: "done",
  failed: "failed",
  canceled: "failed",
};
const SNAPSHOT_PIPELINE_STATUS: Readonly<Record<string, PipelineStatus>> = {
  running: "running",
  waiting_input: "running",
  completed: "completed",
  failed: "failed",
  canceled: "failed",
};

function errorOf(error: JsonObject): StepNode["error"] {
  const code = str(error.code);
  const message = str(error.message);
  return { ...(code === null ? {} : { code }), ...(message === null ? {} : { message }) };
}

/** A node's facts as the kernel's recovery snapshot has them (contract §6), never behind what the node shows of the same attempt. */
function fromSnapshot<T extends StepNode>(node: T, view: JsonObject): T {
  const attempt = num(view.attempt);
  if (attempt !== null && node.attempt !== null && attempt < node.attempt) return node;
  const newAttempt = attempt !== null && attempt !== node.attempt;
  const error = view.error;
  const said = SNAPSHOT_STEP_STATUS[String(view.status)] ?? node.status;
  const startedAt = str(view.startedAt) ?? node.startedAt;
  const finishedAt = str(view.finishedAt) ?? node.finishedAt;
  return {
    ...node,
    type: str(view.type) ?? node.type,
    index: num(view.index) ?? node.index,
    status: newAttempt ? said : onward(STEP_PROGRESS, node.status, said),
    attempt: attempt ?? node.attempt,
    stepRunId: str(view.runId) ?? node.stepRunId,
    startedAt,
    finishedAt,
    durationMs: stepDuration(startedAt, finishedAt) ?? node.durationMs,
    error: isJsonObject(error) ? errorOf(error) : typeof error === "string" ? { message: error } : node.error,
  };
}

/** A candidate as the snapshot has it, its steps folded in. */
function candidateFromSnapshot(node: CandidateNode, view: JsonObject): CandidateNode {
  let steps = node.steps;
  for (const stepView of listAt(view, "steps").filter(isJsonObject)) {
    const id = str(stepView.id);
    if (id !== null)
      steps = upsert(
        steps,
        id,
        () => stepNode(`candidate:${node.id}:${id}`, id),
        (known) => fromSnapshot(known, stepView),
      );
  }
  return {
    ...node,
    runId: str(view.runId) ?? node.runId,
    index: num(view.index) ?? node.index,
    name: str(view.name) ?? node.name,
    status: onward(CANDIDATE_PROGRESS, node.status, SNAPSHOT_CANDIDATE_STATUS[String(view.status)] ?? node.status),
    selected: view.selected === true || node.selected,
    steps,
  };
}

/** A step as the snapshot has it, with its candidates. */
function stepFromSnapshot(node: PipelineStepNode, view: JsonObject): PipelineStepNode {
  let step = fromSnapshot({ ...node, selectedCandidateId: str(view.selectedCandidateId) ?? node.selectedCandidateId }, view);
  for (const candidate of listAt(view, "candidates").filter(isJsonObject)) {
    const id = str(candidate.id);
    if (id !== null) step = withCandidate(step, id, (known) => candidateFromSnapshot(known, candidate));
  }
  return step;
}

/** The kernel's recovery snapshot: what the pipeline's own read model says, on top of what the graph knows. */
function foldSnapshot(graph: PipelineGraph, snapshot: JsonObject): PipelineGraph {
  const runId = str(snapshot.pipelineRunId);
  const base = runId !== null && graph.pipelineRunId !== null && runId !== graph.pipelineRunId ? emptyPipelineGraph() : graph;
  let next: PipelineGraph = {
    ...base,
    pipelineRunId: runId ?? base.pipelineRunId,
    name: str(snapshot.pipelineName) ?? base.name,
    status: onward(PIPELINE_PROGRESS, base.status, SNAPSHOT_PIPELINE_STATUS[String(snapshot.status)] ?? base.status),
  };
  for (const view of listAt(snapshot, "steps").filter(isJsonObject)) {
    const id = str(view.id);
    if (id !== null) next = withStep(next, id, (step) => stepFromSnapshot(step, view));
  }
  return next;
}

export function reducePipelineGraph(graph: PipelineGraph, event: AGUIEvent): PipelineGraph {
  switch (event.type) {
    case "STEP_STARTED":
    case "STEP_FINISHED": {
      const facts = stepFactsFrom(event);
      return facts === undefined ? graph : foldSpan(graph, facts, event.type === "STEP_STARTED" ? "started" : "finished");
    }
    case "CUSTOM":
      return event.name === PIPELINE_ACTIVITY && isJsonObject(event.value) ? foldEnvelope(graph, event.value) : graph;
    case "ACTIVITY_SNAPSHOT": {
      const snapshot =
        event.activityType === PIPELINE_ACTIVITY && isJsonObject(event.content) ? objectAt(event.content, "snapshot") : undefined;
      return snapshot === undefined ? graph : foldSnapshot(graph, snapshot);
    }
    default:
      return graph;
  }
}
