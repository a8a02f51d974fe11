// @ts-check
/**
 * The form that answers a run's interrupts: one fieldset per interrupt,
 * its controls generated from its `responseSchema`. A resume must answer
 * every pending interrupt at once, so there is one submit for all of them.
 */
import { h } from "./dom.js";
import { humanize } from "./labels.js";
import { controlFor } from "./schema-controls.js";

/** @typedef {{ interruptId: string, status: "resolved" | "cancelled", payload?: unknown }} ResumeEntry */

/** What a person weighs before allowing a tool: the projection's public fields, when it has them, by what they say. */
const FACTS = { safeSummary: "Summary", purpose: "Purpose", effect: "Effect", target: "Target" };

/** @param {unknown} id */
const safeId = (id) => String(id).replace(/[^A-Za-z0-9_-]/g, "_");

/** @param {Record<string, any>} meta @returns {Map<string, string>} */
function optionTitles(meta) {
  /** @type {Map<string, string>} */
  const titles = new Map();
  for (const option of Array.isArray(meta.options) ? meta.options : [])
    if (option?.id && option.label) titles.set(String(option.id), String(option.label));
  for (const option of Array.isArray(meta.standardOptions) ? meta.standardOptions : [])
    if (option?.id && option.title) titles.set(String(option.id), String(option.title));
  return titles;
}

/** @param {Record<string, any>} meta */
function facts(meta) {
  const rows = Object.entries(FACTS)
    .filter(([key]) => typeof meta[key] === "string" && meta[key] !== "")
    .map(([key, label]) => [label, String(meta[key])]);
  if (Array.isArray(meta.displayParameters)) {
    rows.push(["Parameters", meta.displayParameters.map((/** @type {any} */ p) => `${p.name} = ${p.value}`).join(", ")]);
  }
  return rows.length === 0
    ? null
    : h(
        "dl",
        { class: "facts" },
        rows.flatMap(([key, value]) => [h("dt", {}, key), h("dd", {}, value)]),
      );
}

/**
 * The schema without a branch that only repeats choices offered already. A
 * deployment confirmation accepts the option picked by its `selectedId`
 * ({selectedId: "confirm"}) and, for older clients, the bare action
 * ({action: "confirm"}); both say the same, so a form showing both offers
 * every choice twice. A branch stays unless each of its enum values is the
 * `selectedId` of another branch.
 * @param {any} schema
 */
export function withoutRepeatedChoices(schema) {
  if (!schema || !Array.isArray(schema.oneOf)) return schema;
  const offered = new Set(schema.oneOf.map((/** @type {any} */ branch) => branch?.properties?.selectedId?.const).filter(Boolean));
  const repeats = (/** @type {any} */ branch) => {
    const required = Array.isArray(branch?.required) ? branch.required : [];
    if (required.length !== 1 || required[0] === "selectedId") return false;
    const values = branch.properties?.[required[0]]?.enum;
    return Array.isArray(values) && values.length > 0 && values.every((value) => offered.has(value));
  };
  const kept = schema.oneOf.filter((/** @type {any} */ branch) => !repeats(branch));
  return kept.length === schema.oneOf.length || kept.length === 0 ? schema : { ...schema, oneOf: kept };
}

/** @param {Record<string, any>} interrupt @param {number} index @param {boolean} several */
function interruptFieldset(interrupt, index, several) {
  const meta = interrupt.metadata ?? {};
  const id = `interrupt-${index}-${safeId(interrupt.id)}`;
  const schema = withoutRepeatedChoices(interrupt.responseSchema);
  const control = controlFor(schema, {
    id,
    label: typeof schema?.title === "string" && schema.title ? schema.title : "Your answer",
    required: true,
    titles: optionTitles(meta),
    hints: typeof meta.freeTextPrompt === "string" ? { freeText: meta.freeTextPrompt } : {},
  });
  const cancelOne = several ? h("input", { type: "checkbox", id: `${id}-cancel` }) : null;
  const expires = interrupt.expiresAt ? ` · expires ${new Date(interrupt.expiresAt).toLocaleTimeString()}` : "";
  const element = h(
    "fieldset",
    { class: "interrupt" },
    h("legend", {}, String(meta.title ?? interrupt.reason ?? "Interrupt")),
    h(
      "p",
      { class: "kind", title: `kind ${meta.kind ?? "?"} · reason ${interrupt.reason ?? "?"}` },
      humanize(String(meta.kind ?? interrupt.reason ?? "interrupt")),
      expires,
    ),
    h("p", { class: "prompt" }, String(interrupt.message ?? "")),
    typeof schema?.description === "string" && schema.description ? h("p", { class: "hint" }, schema.description) : null,
    facts(meta),
    control.element,
    cancelOne ? h("div", { class: "field check" }, h("label", { for: cancelOne.id }, cancelOne, " Cancel this one instead")) : null,
    h("details", { class: "raw" }, h("summary", {}, "Interrupt JSON"), h("pre", {}, JSON.stringify(interrupt, null, 2))),
  );
  return {
    element,
    /** `said`: the answer in words, for the run's title. @returns {{ ok: true, entry: ResumeEntry, said: string } | { ok: false, error: string, focus: HTMLElement | undefined }} */
    read() {
      if (cancelOne?.checked) return { ok: true, entry: { interruptId: interrupt.id, status: "cancelled" }, said: "cancelled" };
      const result = control.read();
      if (!result.ok) return result;
      return {
        ok: true,
        entry: { interruptId: interrupt.id, status: "resolved", payload: result.value },
        said: result.text ?? "answered",
      };
    },
  };
}

/**
 * @param {Record<string, any>[]} interrupts
 * @param {(resume: ResumeEntry[], summary: string) => Promise<boolean>} send resolves true once the service took the answer
 */
export function interruptForm(interrupts, send) {
  const several = interrupts.length > 1;
  const parts = interrupts.map((interrupt, index) => interruptFieldset(interrupt, index, several));
  const heading = h(
    "h3",
    { tabindex: "-1" },
    several ? `The run is waiting for ${interrupts.length} answers` : "The run is waiting for an answer",
  );
  const error = h("p", { class: "form-error", role: "alert" });
  const submit = h("button", { type: "submit", class: "primary" }, several ? "Send answers" : "Send answer");
  const cancel = h("button", { type: "button" }, several ? "Cancel all" : "Cancel");
  const body = h(
    "fieldset",
    { class: "bare" },
    parts.map((part) => part.element),
    h("div", { class: "actions" }, submit, cancel),
    error,
  );
  const form = h("form", { class: "interrupts", novalidate: true }, heading, body);

  /** @param {ResumeEntry[]} resume @param {string} summary */
  async function answer(resume, summary) {
    body.disabled = true;
    error.textContent = "";
    if (await send(resume, summary)) {
      form.classList.add("answered");
      heading.textContent = `Answered: ${summary}`;
    } else {
      body.disabled = false;
    }
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    /** @type {ResumeEntry[]} */
    const resume = [];
    /** @type {string[]} */
    const said = [];
    for (const part of parts) {
      const result = part.read();
      if (!result.ok) {
        error.textContent = result.error;
        result.focus?.focus();
        return;
      }
      resume.push(result.entry);
      said.push(result.said);
    }
    // Words, not JSON: this becomes the resumed run's title; the payload itself is in the request and the inspector.
    void answer(resume, said.join("; "));
  });
  cancel.addEventListener("click", () => {
    void answer(
      interrupts.map((interrupt) => ({ interruptId: interrupt.id, status: "cancelled" })),
      "cancelled",
    );
  });
  return { element: form, focus: () => heading.focus() };
}
