// @ts-check
/**
 * The pipeline view: a run's pipeline graph, drawn under its span chart: its
 * steps in plan order, each node coloured by its status, and a parallel
 * step's candidates side by side, each with its own steps. Kept current as
 * the run streams.
 *
 * The graph is not this page's own reading of the events: it is the
 * service's read-model (docs/pipeline-feed.md §4), folded by the service's
 * own code (`lib/model/pipeline-graph.ts`, served compiled under
 * `/sandbox/model/`) from the events this run received. So a live, saved or
 * replayed run draws what the service's `pipelineGraph` says, and an
 * observer stream, which hands over that graph itself (its STATE_SNAPSHOT
 * and STATE_DELTA), has it adopted as it comes. What the view adds is how
 * the run ended, which the graph does not keep: a pause shows as waiting for
 * an answer (the step it paused in drawn in a waiting colour of its own,
 * explained by the legend), and a step still pending when the pipeline is
 * over is drawn skipped, since it never started. A click on a step's node
 * shows its facts in the inspector.
 */
import { h } from "./dom.js";
import { PIPELINE_ACTIVITY, emptyPipelineGraph, reducePipelineGraph } from "./model/pipeline-graph.js";
import { stepFactsText } from "./step-facts-view.js";

/** @typedef {import("./model/pipeline-graph.js").PipelineGraph} PipelineGraph */
/** @typedef {import("./model/pipeline-graph.js").StepStatus} NodeStatus */
/** @typedef {import("./model/pipeline-graph.js").CandidateNode} CandidateNode */
/** @typedef {import("./model/pipeline-graph.js").StepNode} StepNode */
/** @typedef {"waiting" | "over" | "failed"} RunEnd */

/** A run's pipeline as the view follows it: the service's graph, and how the run ended. */
export class RunPipeline {
  constructor() {
    /** @type {PipelineGraph} */
    this.graph = emptyPipelineGraph();
    /** How the run ended: paused for an answer, over, or failed; undefined while it streams. @type {RunEnd | undefined} */
    this.end = undefined;
    /** Whether the kernel's recovery snapshot drew part of it (the run re-attached or resumed). */
    this.recovered = false;
  }

  /** Whether there is a pipeline to draw: a run that is not one shows no graph. */
  get shown() {
    return this.graph.status !== "idle" || this.graph.steps.length > 0;
  }

  /** Whether the pipeline is over, by its own end or by the run's. */
  get over() {
    return this.graph.status === "completed" || this.graph.status === "failed" || this.end === "over" || this.end === "failed";
  }

  /** Takes one event in; returns whether the drawing changes. @param {Record<string, any>} event */
  add(event) {
    const before = this.graph;
    switch (event.type) {
      case "STATE_SNAPSHOT":
        this.#adopt(event.snapshot?.pipelineGraph);
        break;
      case "STATE_DELTA":
        for (const op of Array.isArray(event.delta) ? event.delta : [])
          if (op?.path === "/pipelineGraph" && (op.op === "replace" || op.op === "add")) this.#adopt(op.value);
        break;
      case "RUN_FINISHED":
      case "RUN_ERROR":
        if (!this.shown) return false;
        this.end = event.type === "RUN_ERROR" ? "failed" : event.outcome?.type === "interrupt" ? "waiting" : "over";
        return true;
      default:
        // The service's fold takes any AG-UI event and returns the graph it was given for one that changes nothing.
        this.graph = reducePipelineGraph(this.graph, /** @type {any} */ (event));
        if (this.graph !== before && event.type === "ACTIVITY_SNAPSHOT" && event.activityType === PIPELINE_ACTIVITY) this.recovered = true;
    }
    return this.graph !== before;
  }

  /**
   * The service's graph from an observer's thread status: folded from
   * everything the execution did, so it replaces what this view had (an
   * empty one, a thread with no pipeline yet, draws nothing and replaces
   * nothing).
   * @param {any} read
   */
  #adopt(read) {
    if (read && typeof read === "object" && Array.isArray(read.steps) && read.steps.length > 0) this.graph = read;
  }
}

/**
 * What a click on a node opens: the step's facts in the inspector (`step-facts-view.js`).
 * @typedef {(node: HTMLElement, step: StepNode, candidate: string | undefined) => void} OpenFacts
 */

/**
 * A node: a swatch in its status's colour, its name and detail. A step
 * paused on an answer is still running in the graph (the service's fold
 * keeps it so) and is drawn as waiting: a colour of its own.
 * @param {{ id: string, status: NodeStatus, attempt: number | null }} step @param {string} label @param {string | undefined} detail
 * @param {{ waiting?: boolean, open?: () => void }} [how]
 */
function node(step, label, detail, { waiting = false, open } = {}) {
  const attempt = (step.attempt ?? 0) > 1 ? ` · attempt ${step.attempt}` : "";
  const status = waiting ? "waiting for an answer" : step.status;
  const content = [
    h("span", { class: "node-status", "aria-hidden": "true" }),
    h(
      "span",
      { class: "node-text" },
      h("span", { class: "node-name" }, label),
      h("span", { class: "node-detail" }, [detail, `${status}${attempt}`].filter(Boolean).join(" · ")),
    ),
  ];
  const element = h(
    "div",
    {
      class: `node status-${step.status}${waiting ? " waiting" : ""}`,
      role: "listitem",
      "data-step": step.id,
      "aria-label": `${label}: ${status}${attempt}`,
    },
    open ? null : content,
  );
  if (open)
    element.append(h("button", { type: "button", class: "node-open", title: "Show the step's facts", onclick: () => open() }, content));
  return element;
}

/** A step as drawn: a step still pending when the pipeline is over never started. @param {StepNode} step @param {boolean} over */
const drawn = (step, over) => (over && step.status === "pending" ? { ...step, status: /** @type {NodeStatus} */ ("skipped") } : step);

/** A step's node, which opens its facts when there is somewhere to show them. @param {StepNode} step @param {string | undefined} detail @param {RunPipeline} pipeline @param {OpenFacts | undefined} openFacts @param {string} [candidate] */
function stepNode(step, detail, pipeline, openFacts, candidate) {
  const shown = drawn(step, pipeline.over);
  const waiting = pipeline.end === "waiting" && shown.status === "running";
  /** @type {HTMLElement} */
  let element;
  const open = openFacts && (() => openFacts(element, shown, candidate));
  element = node(shown, step.id, detail, { waiting, open });
  return element;
}

/** @param {CandidateNode} candidate @param {RunPipeline} pipeline @param {OpenFacts | undefined} openFacts */
function candidateColumn(candidate, pipeline, openFacts) {
  const name = candidate.name ?? candidate.id;
  return h(
    "div",
    {
      class: `candidate${candidate.selected ? " selected" : ""}`,
      role: "group",
      "data-candidate": candidate.id,
      "aria-label": name,
    },
    node({ id: candidate.id, status: candidate.status, attempt: null }, name, candidate.selected ? "selected" : candidate.id),
    h(
      "div",
      { class: "candidate-steps", role: "list" },
      candidate.steps.map((step) => stepNode(step, undefined, pipeline, openFacts, name)),
    ),
  );
}

/** What each colour means; the waiting one is the view's own (a running step paused on an answer). */
const LEGEND = /** @type {const} */ ([
  ["pending", "pending"],
  ["running", "running"],
  ["waiting", "waiting for an answer"],
  ["done", "done"],
  ["failed", "failed"],
  ["skipped", "skipped"],
]);

function legend() {
  return h(
    "ul",
    { class: "graph-legend", "aria-label": "Node colours" },
    LEGEND.map(([status, text]) => h("li", {}, h("span", { class: `legend-swatch swatch-${status}`, "aria-hidden": "true" }), text)),
  );
}

/** The caption's word for where the pipeline stands. @param {RunPipeline} pipeline */
function stateOf(pipeline) {
  if (pipeline.end === "waiting") return "waiting for an answer";
  if (pipeline.graph.status === "failed" || pipeline.end === "failed") return "failed";
  return pipeline.over ? "completed" : "running";
}

/**
 * Draws a run's pipeline graph into `element`, redrawn whole (graphs are small).
 * @param {HTMLElement} element @param {RunPipeline} pipeline @param {OpenFacts} [openFacts]
 */
export function drawGraph(element, pipeline, openFacts) {
  const { graph } = pipeline;
  const caption = h(
    "p",
    { class: "graph-caption" },
    h("strong", {}, graph.name || "pipeline"),
    ` · ${stateOf(pipeline)}`,
    pipeline.recovered ? " · re-attached: drawn from the kernel's recovery snapshot (ACTIVITY_SNAPSHOT), then the live events" : "",
  );
  // The graph's steps and candidates are in plan and index order already: the fold keeps them so.
  const flow = h(
    "div",
    { class: "graph-flow", role: "list", "aria-label": "Steps in order" },
    graph.steps.map((step) =>
      h(
        "div",
        { class: "graph-step", role: "listitem" },
        stepNode(step, step.type || undefined, pipeline, openFacts),
        step.candidates.length > 0
          ? h(
              "div",
              { class: "candidates", role: "group", "aria-label": `Candidates of ${step.id}` },
              step.candidates.map((candidate) => candidateColumn(candidate, pipeline, openFacts)),
            )
          : null,
      ),
    ),
  );
  element.replaceChildren(caption, flow, legend());
}

/**
 * The graph of one run, shown under its span chart once a pipeline event comes.
 * It follows the run's events once a frame while the run streams (the page's
 * stream loop stays as it is), and once more when the stream is over.
 * A node opens its step's facts in the inspector, through the timeline's
 * selection (so the node is marked as an event row or a bar is).
 * @param {{ element: HTMLElement, model: import("./run-model.js").RunModel, number?: number,
 *   timeline?: { select(element: Element, title: string, value: unknown): void } }} view
 */
export function pipelineView(view) {
  const pipeline = new RunPipeline();
  const body = h("div", { class: "graph-body" });
  const panel = h("details", { class: "pipeline-graph", open: true, hidden: true }, h("summary", {}, "Pipeline"), body);
  // In the run's sticky top, beside the span chart: the graph stays in sight while the events scroll.
  const top = view.element.querySelector(".run-top");
  if (top) top.append(panel);
  else view.element.prepend(panel);
  let read = 0;
  const sync = () => {
    let changed = false;
    const { events } = view.model;
    for (; read < events.length; read++) changed = pipeline.add(events[read]?.event ?? {}) || changed;
    if (!changed || !pipeline.shown) return;
    panel.hidden = false;
    drawGraph(body, pipeline, openFacts);
  };
  /** @type {OpenFacts | undefined} */
  const openFacts =
    view.timeline &&
    ((element, step, candidate) => {
      const button = element.querySelector(".node-open") ?? element;
      const where = candidate ? `${candidate} · ${step.id}` : step.id;
      view.timeline?.select(
        button,
        `Run ${view.number ?? ""} · step ${where}`,
        stepFactsText(step, view.model, { waiting: element.classList.contains("waiting"), candidate }),
      );
    });
  const follow = () => {
    // Read before syncing: the frame after the stream ends still takes its last events.
    const live = view.model.status === "streaming";
    sync();
    if (live) requestAnimationFrame(follow);
  };
  requestAnimationFrame(follow);
  return { pipeline, sync };
}
