// @ts-check
/**
 * The pipeline graph of a run, folded from its events: its steps, and each
 * parallel step's candidates, each with its status (pending, running, done,
 * failed, skipped); `pipeline-view.js` draws it. The graph is folded from
 * the run's events alone, so a loaded or replayed run draws the same graph as a live
 * one, and a run that re-attached draws it from the kernel's recovery
 * snapshot (ACTIVITY_SNAPSHOT) before going on with the live events.
 *
 * What each event says (docs/pipeline-feed.md, docs/a2a-contract.md §3):
 * `pipeline_started` lists the steps (pending); STEP_STARTED / STEP_FINISHED
 * open and close a step, or a candidate's step (`candidate:<id>:<step>`),
 * with the step's facts in `metadata["iac-code"].step` (attempt, parent
 * candidate, and on the finish its outcome: completed, failed, skipped, or
 * run-ended, which leaves the step as it was); CUSTOM `step_failed` /
 * `candidate_step_failed` mark a failure for a stream without those facts;
 * `candidate_*` events follow the candidates; steps still pending when the
 * pipeline ends were skipped. An observer stream (Attach) also hands over
 * the service's own graph (`pipelineGraph` in its STATE_SNAPSHOT and
 * STATE_DELTA): that one is adopted whole, as the feed's contract says.
 */
import { PIPELINE_EVENT } from "./run-model.js";

/** @typedef {"pending" | "running" | "done" | "failed" | "skipped"} NodeStatus */
/**
 * @typedef {object} CandidateNode
 * @property {string} id
 * @property {string} name
 * @property {NodeStatus} status
 * @property {boolean} selected
 * @property {StepNode[]} steps
 * @property {number} [index] its place among the step's candidates: they are drawn in this order, not by arrival
 */
/**
 * @typedef {object} StepNode
 * @property {string} id
 * @property {string} type
 * @property {NodeStatus} status
 * @property {number} attempt
 * @property {CandidateNode[]} candidates
 */
/**
 * @typedef {object} Graph
 * @property {string} name
 * @property {StepNode[]} steps
 * @property {"running" | "completed" | "failed" | "waiting"} state
 * @property {boolean} recovered drawn from a recovery snapshot at first
 */

export const STATUS_TEXT = { pending: "pending", running: "running", done: "done", failed: "failed", skipped: "skipped" };

/** The snapshot's run statuses (lib/kernel/pipeline-snapshot.ts) as node statuses. @type {Record<string, NodeStatus>} */
const SNAPSHOT_STATUS = { running: "running", waiting_input: "running", completed: "done", failed: "failed", canceled: "skipped" };

/** @param {unknown} value */
const text = (value) => (typeof value === "string" && value !== "" ? value : undefined);

/**
 * The step facts the service adds to STEP_STARTED / STEP_FINISHED
 * (docs/pipeline-feed.md §1); absent from older services and other streams.
 * @param {Record<string, any>} event
 * @returns {Record<string, any>}
 */
function stepFacts(event) {
  const facts = event.metadata?.["iac-code"]?.step;
  return facts && typeof facts === "object" ? facts : {};
}

/** The read-model's candidate and step statuses are the graph's own (lib/model/pipeline-graph.ts). @param {unknown} status @returns {NodeStatus} */
const asStatus = (status) => (typeof status === "string" && status in STATUS_TEXT ? /** @type {NodeStatus} */ (status) : "pending");

export class PipelineGraphModel {
  constructor() {
    /** @type {Graph} */
    this.graph = { name: "", steps: [], state: "running", recovered: false };
    this.seen = false;
  }

  /** @param {string} id @param {string} [type] */
  #step(id, type) {
    let step = this.graph.steps.find((s) => s.id === id);
    if (!step) {
      step = { id, type: type ?? "", status: "pending", attempt: 0, candidates: [] };
      this.graph.steps.push(step);
    } else if (type && !step.type) step.type = type;
    return step;
  }

  /** The candidate a step or event names, under the step that runs it (the open parallel step when unnamed). @param {string} id @param {string | undefined} stepId */
  #candidate(id, stepId) {
    for (const step of this.graph.steps) {
      const found = step.candidates.find((c) => c.id === id);
      if (found) return found;
    }
    const parent =
      (stepId ? this.#step(stepId) : undefined) ??
      this.graph.steps.findLast((s) => s.status === "running" && s.type === "parallel_candidates") ??
      this.graph.steps.findLast((s) => s.status === "running") ??
      this.#step("candidates");
    if (!parent.type) parent.type = "parallel_candidates";
    /** @type {CandidateNode} */
    const candidate = { id, name: id, status: "pending", selected: false, steps: [] };
    parent.candidates.push(candidate);
    return candidate;
  }

  /** @param {CandidateNode | undefined} candidate @param {string} id */
  #candidateStep(candidate, id) {
    if (!candidate) return undefined;
    let step = candidate.steps.find((s) => s.id === id);
    if (!step) {
      step = { id, type: "", status: "pending", attempt: 0, candidates: [] };
      candidate.steps.push(step);
    }
    return step;
  }

  /**
   * The node a step name stands for: `candidate:<candidate>:<step>` inside a candidate, else the step itself.
   * @param {string} name @param {Record<string, any>} facts
   */
  #nodeOf(name, facts) {
    const inCandidate = /^candidate:(.+):([^:]+)$/.exec(name);
    if (inCandidate) {
      const candidate = this.#candidate(inCandidate[1] ?? "", text(facts.parent?.stepId));
      candidate.name = text(facts.parent?.candidateName) ?? candidate.name;
      if (candidate.status === "pending") candidate.status = "running";
      return this.#candidateStep(candidate, inCandidate[2] ?? "");
    }
    return this.#step(text(facts.stepId) ?? name.replace(/^step:/, ""), text(facts.type));
  }

  /** Folds one event in; returns whether the graph changed. @param {Record<string, any>} event */
  add(event) {
    switch (event.type) {
      case "STEP_STARTED": {
        const facts = stepFacts(event);
        const node = this.#nodeOf(String(event.stepName), facts);
        if (!node) return false;
        node.attempt = typeof facts.attempt === "number" ? facts.attempt : node.attempt + 1;
        node.status = "running";
        return (this.seen = true);
      }
      case "STEP_FINISHED": {
        const facts = stepFacts(event);
        const node = this.#nodeOf(String(event.stepName), facts);
        if (!node) return false;
        const outcome = text(facts.outcome);
        // The run ended with the step still open (a pause, an error): the span closes, the step does not.
        if (outcome === "run-ended") return (this.seen = true);
        if (outcome === "failed") node.status = "failed";
        else if (outcome === "skipped") node.status = "skipped";
        else if (node.status !== "failed") node.status = "done";
        return (this.seen = true);
      }
      case "CUSTOM":
        return event.name === PIPELINE_EVENT ? this.#envelope(event.value ?? {}) : false;
      case "ACTIVITY_SNAPSHOT":
        return event.activityType === PIPELINE_EVENT ? this.#recover(event.content?.snapshot ?? {}) : false;
      case "STATE_SNAPSHOT":
        return this.#adopt(event.snapshot?.pipelineGraph);
      case "STATE_DELTA":
        return (Array.isArray(event.delta) ? event.delta : [])
          .filter((/** @type {any} */ op) => op?.path === "/pipelineGraph" && (op.op === "replace" || op.op === "add"))
          .reduce((/** @type {boolean} */ changed, /** @type {any} */ op) => this.#adopt(op.value) || changed, false);
      case "RUN_FINISHED":
        if (!this.seen) return false;
        if (event.outcome?.type === "interrupt") this.graph.state = "waiting";
        else this.#end(this.graph.state === "failed" ? "failed" : "completed");
        return true;
      case "RUN_ERROR":
        if (!this.seen) return false;
        this.#end("failed");
        return true;
      default:
        return false;
    }
  }

  /** @param {Record<string, any>} value */
  #envelope(value) {
    const data = value.data ?? {};
    const stepId = text(value.step?.id);
    const candidateId = text(value.candidate?.id) ?? text(data.subPipelineId) ?? text(value.subPipelineId);
    this.seen = true;
    switch (value.eventType) {
      case "pipeline_started":
      case "pipeline_resumed": {
        this.graph.name = text(data.pipelineName) ?? text(value.pipelineName) ?? this.graph.name;
        for (const step of Array.isArray(data.steps) ? data.steps : []) {
          const id = typeof step === "string" ? step : text(step?.id);
          if (id) this.#step(id, text(step?.type));
        }
        return true;
      }
      case "candidate_started": {
        if (!candidateId) return false;
        const candidate = this.#candidate(candidateId, stepId);
        candidate.name = text(value.candidate?.name) ?? text(data.strategy) ?? candidate.name;
        candidate.status = "running";
        if (typeof value.candidate?.index === "number") candidate.index = value.candidate.index;
        for (const id of Array.isArray(value.candidate?.steps) ? value.candidate.steps : []) this.#candidateStep(candidate, String(id));
        return true;
      }
      case "candidate_completed":
      case "candidate_failed":
      case "candidate_interrupted": {
        if (!candidateId) return false;
        const candidate = this.#candidate(candidateId, stepId);
        const failed = value.eventType !== "candidate_completed" || (text(data.outcome) ?? "succeeded") !== "succeeded";
        candidate.status = value.eventType === "candidate_interrupted" ? "skipped" : failed ? "failed" : "done";
        return true;
      }
      case "candidate_selected": {
        const chosen = text(data.candidateId);
        for (const step of this.graph.steps) for (const c of step.candidates) if (c.id === chosen) c.selected = true;
        return true;
      }
      case "step_failed":
        if (stepId) this.#step(stepId).status = "failed";
        return true;
      case "candidate_step_failed": {
        const id = text(value.candidateStep?.id);
        const node = candidateId && id ? this.#candidateStep(this.#candidate(candidateId, stepId), id) : undefined;
        if (node) node.status = "failed";
        return true;
      }
      case "pipeline_completed":
        this.#end("completed");
        return true;
      case "pipeline_failed":
      case "pipeline_error":
        this.#end("failed");
        return true;
      default:
        return false;
    }
  }

  /** A re-attached run: the graph as the kernel's recovery snapshot has it. @param {Record<string, any>} snapshot */
  #recover(snapshot) {
    this.seen = true;
    this.graph.recovered = true;
    this.graph.name = text(snapshot.pipelineName) ?? this.graph.name;
    for (const view of Array.isArray(snapshot.steps) ? snapshot.steps : []) {
      const id = text(view?.id);
      if (!id) continue;
      const step = this.#step(id, text(view.type));
      step.status = SNAPSHOT_STATUS[view.status] ?? step.status;
      if (typeof view.attempt === "number") step.attempt = view.attempt;
      for (const c of Array.isArray(view.candidates) ? view.candidates : []) {
        const cid = text(c?.id);
        if (!cid) continue;
        const candidate = this.#candidate(cid, id);
        candidate.name = text(c.name) ?? candidate.name;
        candidate.status = SNAPSHOT_STATUS[c.status] ?? candidate.status;
        candidate.selected = c.selected === true || view.selectedCandidateId === cid;
        for (const s of Array.isArray(c.steps) ? c.steps : []) {
          const node = text(s?.id) && this.#candidateStep(candidate, s.id);
          if (node) node.status = SNAPSHOT_STATUS[s.status] ?? node.status;
        }
      }
    }
    return true;
  }

  /**
   * The service's own graph, from an observer's thread status: it was folded
   * from everything the execution did, so it replaces what this view had.
   * @param {any} read
   */
  #adopt(read) {
    if (!read || typeof read !== "object" || !Array.isArray(read.steps) || read.steps.length === 0) return false;
    const recovered = this.graph.recovered;
    /** @type {(step: any) => StepNode} */
    const toStep = (step) => ({
      id: String(step.id ?? step.key ?? "?"),
      type: text(step.type) ?? "",
      status: asStatus(step.status),
      attempt: typeof step.attempt === "number" ? step.attempt : 0,
      candidates: (Array.isArray(step.candidates) ? step.candidates : []).map((/** @type {any} */ candidate) => ({
        id: String(candidate.id),
        name: text(candidate.name) ?? String(candidate.id),
        status: asStatus(candidate.status),
        selected: candidate.selected === true,
        steps: (Array.isArray(candidate.steps) ? candidate.steps : []).map(toStep),
      })),
    });
    const state = { completed: "completed", failed: "failed" }[String(read.status)];
    this.graph = {
      name: text(read.name) ?? this.graph.name,
      steps: read.steps.map(toStep),
      state: /** @type {Graph["state"]} */ (state ?? this.graph.state),
      recovered,
    };
    return (this.seen = true);
  }

  /** The pipeline is over: what never started was skipped. @param {"completed" | "failed"} state */
  #end(state) {
    this.graph.state = state;
    const skip = (/** @type {StepNode} */ step) => {
      if (step.status === "pending") step.status = "skipped";
      for (const candidate of step.candidates) {
        if (candidate.status === "pending") candidate.status = "skipped";
        candidate.steps.forEach(skip);
      }
    };
    this.graph.steps.forEach(skip);
  }
}
