// @ts-check
/**
 * One run's events as a virtual list: every row is one fixed-height line,
 * so the list can be as tall as all of them while only the rows near the
 * viewport exist in the DOM. A run of thousands of events then costs a few
 * hundred elements, and streaming more of them only grows a height.
 *
 * The rows scroll with the whole timeline (several runs share one
 * scroller), so the window is worked out from where this list sits in it.
 */
import { h } from "./dom.js";

/** Must match `.ev`'s height in sandbox.css: rows are placed by arithmetic, never measured. */
export const ROW_HEIGHT = 24;
/**
 * Rows kept either side of the viewport. Generous, so that a run of a few
 * hundred events is whole in the DOM (and readable by find-in-page) while a
 * run of thousands is not.
 */
const OVERSCAN = 150;

/** @typedef {import("./run-model.js").EventEntry} EventEntry */

export class EventList {
  /**
   * @param {HTMLElement} scroller the element that scrolls (the timeline)
   * @param {string} label
   * @param {(entry: EventEntry) => HTMLElement} renderRow a row's content, made when it scrolls into the window
   */
  constructor(scroller, label, renderRow) {
    this.scroller = scroller;
    this.renderRow = renderRow;
    /** The entries shown, after filtering: position in this array is position in the list. @type {EventEntry[]} */
    this.shown = [];
    /** The rows in the DOM, by position. @type {Map<number, HTMLLIElement>} */
    this.rows = new Map();
    this.frame = 0;
    this.element = h("ol", { class: "events virtual", "aria-label": label });
    scroller.addEventListener("scroll", () => this.schedule(), { passive: true });
  }

  /** @param {EventEntry[]} entries */
  setEntries(entries) {
    this.shown = entries;
    for (const row of this.rows.values()) row.remove();
    this.rows.clear();
    this.render();
  }

  /** @param {EventEntry} entry */
  push(entry) {
    this.shown.push(entry);
    // The height now, the rows at the next frame: a caller following the stream scrolls to the new end before then.
    this.element.style.setProperty("--rows", String(this.shown.length));
    this.schedule();
  }

  // Scrolls and streams both fire far more often than frames: lay out once per frame.
  schedule() {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.render();
    });
  }

  /** The list's top, in the scroller's content coordinates. */
  #top() {
    return this.element.getBoundingClientRect().top - this.scroller.getBoundingClientRect().top + this.scroller.scrollTop;
  }

  render() {
    this.element.style.setProperty("--rows", String(this.shown.length));
    const top = this.#top();
    const from = Math.max(0, Math.floor((this.scroller.scrollTop - top) / ROW_HEIGHT) - OVERSCAN);
    const to = Math.min(this.shown.length, Math.ceil((this.scroller.scrollTop + this.scroller.clientHeight - top) / ROW_HEIGHT) + OVERSCAN);
    for (const [at, row] of this.rows) {
      if (at < from || at >= to) {
        row.remove();
        this.rows.delete(at);
      }
    }
    for (let at = from; at < to; at++) {
      if (this.rows.has(at)) continue;
      const entry = this.shown[at];
      if (!entry) continue;
      const row = h("li", { style: { "--at": String(at) } }, this.renderRow(entry));
      row.dataset.at = String(at);
      // In event order in the DOM too, for the keyboard, screen readers and whoever reads the rows in order.
      this.element.insertBefore(row, this.#rowAfter(at, to));
      this.rows.set(at, row);
    }
  }

  /** @param {number} at @param {number} to */
  #rowAfter(at, to) {
    for (let next = at + 1; next < to; next++) {
      const row = this.rows.get(next);
      if (row) return row;
    }
    return null;
  }

  /** The row of an entry, brought into the DOM and into view first. @param {EventEntry} entry @returns {HTMLElement | undefined} */
  reveal(entry) {
    const at = this.shown.indexOf(entry);
    if (at < 0) return undefined;
    const top = this.#top() + at * ROW_HEIGHT;
    const { scrollTop, clientHeight } = this.scroller;
    // Clear of this run's sticky header and chart, which cover the top of the viewport while its rows scroll.
    const covered = this.element.closest(".run")?.querySelector(".run-sticky")?.getBoundingClientRect().height ?? 0;
    if (top < scrollTop + covered) this.scroller.scrollTop = top - covered - ROW_HEIGHT;
    else if (top + ROW_HEIGHT > scrollTop + clientHeight) this.scroller.scrollTop = top + 2 * ROW_HEIGHT - clientHeight;
    this.render();
    const row = this.rows.get(at)?.firstElementChild;
    return row instanceof HTMLElement ? row : undefined;
  }

  /** The entry shown `step` rows from `entry` (clamped), for the arrow keys. @param {EventEntry} entry @param {number} step */
  neighbour(entry, step) {
    const at = this.shown.indexOf(entry);
    return this.shown[Math.max(0, Math.min(this.shown.length - 1, at + step))];
  }

  /** Rows in the DOM right now, for callers that mark some (a span's events). */
  *visibleRows() {
    for (const row of this.rows.values()) {
      const button = row.firstElementChild;
      if (button instanceof HTMLElement) yield button;
    }
  }
}
