// @ts-check
/**
 * Find: narrows every run's event list by event type, by name (a CUSTOM
 * event's name or pipeline eventType, a step, tool or message's name or
 * id), and by text anywhere in the event's JSON. Typing filters as it goes.
 */
import { h } from "./dom.js";
import { subtype } from "./event-text.js";

/** @typedef {import("./run-model.js").EventEntry} EventEntry */

/**
 * The names an event answers to, for the name filter: its own, and its span's (a tool call's name reaches its
 * arguments, end and result, which carry only the call's id).
 * @param {EventEntry} entry
 */
function namesOf({ event, span }) {
  return [subtype(event), event.name, event.stepName, event.toolCallName, event.toolCallId, event.messageId, event.role, span?.label]
    .filter((name) => typeof name === "string")
    .join("\n")
    .toLowerCase();
}

/** Each event's JSON, made once: a search over thousands of events should not stringify them on every keystroke. */
const jsonText = new WeakMap();
/** @param {EventEntry} entry */
function jsonOf(entry) {
  let text = jsonText.get(entry);
  if (text === undefined) {
    text = JSON.stringify(entry.event).toLowerCase();
    jsonText.set(entry, text);
  }
  return text;
}

export class Filters {
  /**
   * @param {{ type: HTMLSelectElement, name: HTMLInputElement, search: HTMLInputElement, clear: HTMLButtonElement }} ui
   * @param {(matches: (entry: EventEntry) => boolean, active: boolean) => void} onChange
   */
  constructor(ui, onChange) {
    this.ui = ui;
    this.onChange = onChange;
    /** @type {Set<string>} */
    this.types = new Set();
    ui.type.addEventListener("change", () => this.#changed());
    ui.name.addEventListener("input", () => this.#changed());
    ui.search.addEventListener("input", () => this.#changed());
    ui.clear.addEventListener("click", () => {
      ui.type.value = "";
      ui.name.value = "";
      ui.search.value = "";
      this.#changed();
    });
  }

  /** Offers an event's type in the type list once it has been seen. @param {Record<string, any>} event */
  noteType(event) {
    const type = String(event.type);
    if (this.types.has(type)) return;
    this.types.add(type);
    const options = [...this.types].sort().map((name) => h("option", { value: name }, name));
    const chosen = this.ui.type.value;
    this.ui.type.replaceChildren(h("option", { value: "" }, "all types"), ...options);
    this.ui.type.value = chosen;
  }

  /** @returns {(entry: EventEntry) => boolean} */
  matcher() {
    const type = this.ui.type.value;
    const name = this.ui.name.value.trim().toLowerCase();
    const search = this.ui.search.value.trim().toLowerCase();
    return (entry) =>
      (type === "" || entry.event.type === type) &&
      (name === "" || namesOf(entry).includes(name)) &&
      (search === "" || jsonOf(entry).includes(search));
  }

  get active() {
    return this.ui.type.value !== "" || this.ui.name.value.trim() !== "" || this.ui.search.value.trim() !== "";
  }

  #changed() {
    this.ui.clear.disabled = !this.active;
    this.onChange(this.matcher(), this.active);
  }
}
