// @ts-check
/**
 * The pipeline view: the graph `pipeline-graph.js` folds, drawn under a
 * run's span chart: its steps in plan order, each node coloured by its
 * status, and a parallel step's candidates side by side, each with its own
 * steps. Kept current as the run streams.
 */
import { h } from "./dom.js";
import { PipelineGraphModel, STATUS_TEXT } from "./pipeline-graph.js";

/** @typedef {import("./pipeline-graph.js").StepNode} StepNode */
/** @typedef {import("./pipeline-graph.js").CandidateNode} CandidateNode */
/** @typedef {import("./pipeline-graph.js").Graph} Graph */

/** @param {StepNode} step @param {string} label @param {string} [detail] */
function node(step, label, detail) {
  const attempt = step.attempt > 1 ? ` · attempt ${step.attempt}` : "";
  return h(
    "div",
    {
      class: `node status-${step.status}`,
      role: "listitem",
      "data-step": step.id,
      "aria-label": `${label}: ${STATUS_TEXT[step.status]}${attempt}`,
    },
    h("span", { class: "node-status", "aria-hidden": "true" }),
    h(
      "span",
      { class: "node-text" },
      h("span", { class: "node-name" }, label),
      h("span", { class: "node-detail" }, [detail, `${STATUS_TEXT[step.status]}${attempt}`].filter(Boolean).join(" · ")),
    ),
  );
}

/** @param {CandidateNode} candidate */
function candidateColumn(candidate) {
  const status = /** @type {StepNode} */ ({ id: candidate.id, type: "", status: candidate.status, attempt: 0, candidates: [] });
  return h(
    "div",
    {
      class: `candidate${candidate.selected ? " selected" : ""}`,
      role: "group",
      "data-candidate": candidate.id,
      "aria-label": candidate.name,
    },
    node(status, candidate.name, candidate.selected ? "selected" : candidate.id),
    h(
      "div",
      { class: "candidate-steps", role: "list" },
      candidate.steps.map((step) => node(step, step.id)),
    ),
  );
}

/** Draws a run's pipeline graph into `element`, redrawn whole (graphs are small). @param {HTMLElement} element @param {Graph} graph */
export function drawGraph(element, graph) {
  const state = { running: "running", completed: "completed", failed: "failed", waiting: "waiting for an answer" }[graph.state];
  const caption = h(
    "p",
    { class: "graph-caption" },
    h("strong", {}, graph.name || "pipeline"),
    ` · ${state}`,
    graph.recovered ? " · re-attached: drawn from the kernel's recovery snapshot (ACTIVITY_SNAPSHOT), then the live events" : "",
  );
  const flow = h(
    "div",
    { class: "graph-flow", role: "list", "aria-label": "Steps in order" },
    graph.steps.map((step) =>
      h(
        "div",
        { class: "graph-step", role: "listitem" },
        node(step, step.id, step.type || undefined),
        step.candidates.length > 0
          ? h(
              "div",
              { class: "candidates", role: "group", "aria-label": `Candidates of ${step.id}` },
              [...step.candidates].sort((a, b) => (a.index ?? Infinity) - (b.index ?? Infinity)).map(candidateColumn),
            )
          : null,
      ),
    ),
  );
  element.replaceChildren(caption, flow);
}

/**
 * The graph of one run, shown under its span chart once a pipeline event comes.
 * It follows the run's events once a frame while the run streams (the page's
 * stream loop stays as it is), and once more when the stream is over.
 * @param {{ element: HTMLElement, model: import("./run-model.js").RunModel }} view
 */
export function pipelineView(view) {
  const graph = new PipelineGraphModel();
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
    for (; read < events.length; read++) changed = graph.add(events[read]?.event ?? {}) || changed;
    if (!changed) return;
    panel.hidden = false;
    drawGraph(body, graph.graph);
  };
  const follow = () => {
    // Read before syncing: the frame after the stream ends still takes its last events.
    const live = view.model.status === "streaming";
    sync();
    if (live) requestAnimationFrame(follow);
  };
  requestAnimationFrame(follow);
  return { graph, sync };
}
