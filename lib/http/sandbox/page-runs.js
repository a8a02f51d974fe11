// @ts-check
/**
 * The runs on the page (live, brought back after a reload, or opened from a
 * file), which one the user looks at, and what the inspector and the
 * thread-state panel show: both follow the run the user last started or
 * clicked in, and never show another run's data under its number.
 */
import { requestButtons } from "./run-request.js";

/** @typedef {ReturnType<import("./timeline.js").Timeline["addRun"]>} View */
/**
 * A run on the page, live, restored or from a file: what is kept of it across a reload.
 * @typedef {{ view: View, threadId: string | undefined, request: import("./run-request.js").SentRequest | undefined, response: import("./run-request.js").ReceivedResponse | undefined }} PageRun
 */

export class PageRuns {
  /** Every run on the page, oldest first. @type {PageRun[]} */
  all = [];
  /** The run the user last clicked in (or started): the inspector and the state panel show only its data. @type {PageRun | undefined} */
  lookingAt;
  /** @type {PageRun | undefined} */
  #inspected;
  /** @type {PageRun | undefined} */
  #stateShown;
  #page;

  /**
   * @param {{
   *   inspectorTitle: HTMLElement,
   *   inspectorBody: HTMLElement,
   *   statePanel: import("./state-panel.js").StatePanel,
   *   say: (message: string, tone?: "info" | "error" | "busy") => void,
   * }} page
   */
  constructor(page) {
    this.#page = page;
  }

  /** Shows `value` in the inspector, as part of `run`. @param {string} title @param {unknown} value @param {PageRun | undefined} run */
  inspect(title, value, run) {
    this.#inspected = run;
    this.#page.inspectorTitle.textContent = title;
    this.#page.inspectorBody.textContent = typeof value === "string" ? value : JSON.stringify(value, null, 2);
  }

  /**
   * The user looks at `run` (started it, or clicked in it): what the inspector
   * and the state panel show of another run goes.
   * @param {PageRun} run
   */
  lookAt(run) {
    this.lookingAt = run;
    if (this.#inspected !== run)
      this.inspect(`Nothing selected in run ${run.view.number}`, "Click an event or a span to see it here.", run);
    if (this.#stateShown !== run) {
      this.#stateShown = run;
      this.#page.statePanel.reset(`Thread state · run ${run.view.number}`);
      for (const entry of run.view.model.events) this.#page.statePanel.apply(entry.event);
    }
  }

  /** Whether the state panel shows `run`'s state, so its new events go there too. @param {PageRun} run */
  showsState(run) {
    return this.#stateShown === run;
  }

  /** A new run section joins the page, with its request's buttons if it sent one. @param {View} view @param {Partial<PageRun>} [about] @returns {PageRun} */
  adopt(view, about = {}) {
    /** @type {PageRun} */
    const run = { view, threadId: undefined, request: undefined, response: undefined, ...about };
    this.all.push(run);
    if (run.request) {
      const request = run.request;
      view.element.querySelector("header")?.append(
        requestButtons({
          request,
          response: () => run.response,
          show: (title, text) => this.inspect(title, text, run),
          say: this.#page.say,
          name: `run ${view.number}`,
        }),
      );
    }
    return run;
  }

  /** The run whose section holds `target`, if any. @param {EventTarget | null} target */
  runAt(target) {
    const section = target instanceof Element ? target.closest("section.run") : null;
    return this.all.find((run) => run.view.element === section);
  }

  /** Every run leaves the page, and the panels show none. */
  clear() {
    this.all.length = 0;
    this.lookingAt = this.#inspected = this.#stateShown = undefined;
    this.inspect("Nothing selected", "", undefined);
  }
}
