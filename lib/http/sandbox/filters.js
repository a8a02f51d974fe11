// @ts-check
/**
 * Find: narrows every run's event list by event type, by name (a CUSTOM
 * event's name or pipeline eventType, a step, tool or message's name or
 * id), and by text anywhere in the event's JSON. Typing filters as it goes.
 * With Regex ticked, the name and the search are regular expressions
 * (case-insensitive); a pattern that does not compile is said under the
 * find row and leaves the list as it was, so a half-typed one never throws.
 */
import { h } from "./dom.js";
import { subtype } from "./event-text.js";

/** @typedef {import("./run-model.js").EventEntry} EventEntry */

/** A text as written and in lower case: a plain find compares the latter, a regular expression reads the former. */
/** @typedef {{ raw: string, lower: string }} Text */
/** @typedef {(text: Text) => boolean} TextTest */

/** @param {string} raw @returns {Text} */
const textOf = (raw) => ({ raw, lower: raw.toLowerCase() });

/**
 * The test a find field stands for: the text contains it, or (as a regular expression) matches it; undefined when empty.
 * @param {string} pattern @param {boolean} regex @returns {TextTest | undefined}
 */
function textTest(pattern, regex) {
  if (pattern === "") return undefined;
  if (regex) {
    const compiled = new RegExp(pattern, "im");
    return (text) => compiled.test(text.raw);
  }
  const wanted = pattern.toLowerCase();
  return (text) => text.lower.includes(wanted);
}

/**
 * The names an event answers to, for the name filter: its own, and its span's (a tool call's name reaches its
 * arguments, end and result, which carry only the call's id).
 * @param {EventEntry} entry
 */
function namesOf({ event, span }) {
  return textOf(
    [subtype(event), event.name, event.stepName, event.toolCallName, event.toolCallId, event.messageId, event.role, span?.label]
      .filter((name) => typeof name === "string")
      .join("\n"),
  );
}

/** Each event's JSON, made once: a search over thousands of events should not stringify them on every keystroke. */
const jsonText = new WeakMap();
/** @param {EventEntry} entry */
function jsonOf(entry) {
  let text = jsonText.get(entry);
  if (text === undefined) {
    text = textOf(JSON.stringify(entry.event));
    jsonText.set(entry, text);
  }
  return text;
}

export class Filters {
  /**
   * @param {{ type: HTMLSelectElement, name: HTMLInputElement, search: HTMLInputElement, clear: HTMLButtonElement, regex?: HTMLInputElement, error?: HTMLElement }} ui
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
    ui.regex?.addEventListener("change", () => this.#changed());
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

  /** Throws a SyntaxError for a regular expression that does not compile. @returns {(entry: EventEntry) => boolean} */
  matcher() {
    const type = this.ui.type.value;
    const regex = this.ui.regex?.checked ?? false;
    const name = textTest(this.ui.name.value.trim(), regex);
    const search = textTest(this.ui.search.value.trim(), regex);
    return (entry) => (type === "" || entry.event.type === type) && (!name || name(namesOf(entry))) && (!search || search(jsonOf(entry)));
  }

  get active() {
    return this.ui.type.value !== "" || this.ui.name.value.trim() !== "" || this.ui.search.value.trim() !== "";
  }

  #changed() {
    this.ui.clear.disabled = !this.active;
    let matches;
    try {
      matches = this.matcher();
    } catch (error) {
      this.#sayError(`Not a regular expression: ${error instanceof Error ? error.message : error}`);
      return;
    }
    this.#sayError("");
    this.onChange(matches, this.active);
  }

  /** @param {string} message */
  #sayError(message) {
    if (!this.ui.error) return;
    this.ui.error.textContent = message;
    this.ui.error.hidden = message === "";
    for (const field of [this.ui.name, this.ui.search]) {
      if (message && field.value.trim()) field.setAttribute("aria-invalid", "true");
      else field.removeAttribute("aria-invalid");
    }
  }
}
