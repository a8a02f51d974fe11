// @ts-check
/**
 * Form controls generated from an interrupt's `responseSchema`. They cover
 * what the service builds (schemas/interrupts/): objects of enums, strings
 * and objects, and `oneOf` branches told apart by a `selectedId` const or
 * by `freeText`, `action` or `value`. Anything else is answered as JSON, so
 * a schema this page does not know can still be answered.
 *
 * Every label is for a person: the schema's own `title` and `description`
 * first, the option titles the interrupt carries, else the key or value in
 * words (`parameter_overrides` → "Parameter overrides"); the raw key or
 * value stays in the label's tooltip. Each answer also reads back as words,
 * for the run's title and the "Answered" line.
 *
 * Native validation is off (the form is `novalidate`): a required field of
 * a `oneOf` branch the user did not pick must not block the submit.
 */
import { h } from "./dom.js";
import { humanize } from "./labels.js";

/** @typedef {Record<string, any>} Schema */
/** `text`: the answer in words, when there is one to say. */
/** @typedef {{ ok: true, value: unknown, text?: string } | { ok: false, error: string, focus: HTMLElement | undefined }} Read */
/** @typedef {{ element: HTMLElement | null, read: () => Read, onlyOptional?: boolean }} Control */
/**
 * @typedef {object} Context
 * @property {string} id unique per control, for labels and radio groups
 * @property {string} label what a person reads
 * @property {string} [key] the property's name in the schema, when it is one
 * @property {boolean} required
 * @property {Map<string, string>} titles display names of option ids (the interrupt's standardOptions)
 * @property {Record<string, string>} hints help shown under a property, by name
 */

const RADIO_LIMIT = 6;

/** @param {unknown} value @param {string} [text] @returns {Read} */
const ok = (value, text) => ({ ok: true, value, text });
/** @param {string} error @param {HTMLElement} [focus] @returns {Read} */
const fail = (error, focus) => ({ ok: false, error, focus });

/** @param {Schema | undefined} schema @param {Context} ctx @returns {Control} */
export function controlFor(schema, ctx) {
  if (!schema || typeof schema !== "object") return jsonControl(ctx);
  if (Array.isArray(schema.oneOf)) return oneOfControl(schema.oneOf, ctx);
  if ("const" in schema) return { element: null, read: () => ok(schema.const) };
  if (Array.isArray(schema.enum)) return enumControl(schema.enum, enumTitles(schema), ctx);
  if (schema.type === "object" && schema.properties && typeof schema.properties === "object") return objectControl(schema, ctx);
  if (schema.type === "string") return textControl(schema, ctx);
  if (schema.type === "boolean") return booleanControl(ctx);
  if (schema.type === "number" || schema.type === "integer") return numberControl(schema, ctx);
  return jsonControl(ctx);
}

/**
 * Display names a schema gives its enum values itself (`x-enumNames`, or the older `enumNames`), by position.
 * @param {Schema} schema @returns {unknown[]}
 */
function enumTitles(schema) {
  const names = schema["x-enumNames"] ?? schema.enumNames;
  return Array.isArray(names) ? names : [];
}

/** @param {Context} ctx @param {HTMLElement} input */
function labelled(ctx, input) {
  const hint = (ctx.key && ctx.hints[ctx.key]) || ctx.hints[ctx.label];
  const hintId = `${ctx.id}-hint`;
  if (hint) input.setAttribute("aria-describedby", hintId);
  if (ctx.required) input.setAttribute("aria-required", "true");
  return h(
    "div",
    { class: "field" },
    h("label", { for: ctx.id, title: ctx.key }, ctx.label, ctx.required ? "" : h("span", { class: "optional-mark" }, " (optional)")),
    input,
    hint ? h("p", { class: "hint", id: hintId }, hint) : null,
  );
}

/** @param {Schema} schema @param {Context} ctx @returns {Control} */
function objectControl(schema, ctx) {
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  const fields = Object.entries(schema.properties).map(([name, property]) => {
    const isRequired = required.has(name);
    const label = typeof property?.title === "string" && property.title ? property.title : humanize(name);
    // A property's own description is its hint, unless the interrupt brought one (a question's free-text prompt).
    const hints =
      typeof property?.description === "string" && !ctx.hints[name] ? { ...ctx.hints, [name]: property.description } : ctx.hints;
    const control = controlFor(property, { ...ctx, id: `${ctx.id}-${name}`, label, key: name, required: isRequired, hints });
    return { name, label, isRequired, control };
  });
  const shown = fields.filter((field) => field.control.element);
  const optional = shown.filter((field) => !field.isRequired);
  const element =
    shown.length === 0
      ? null
      : h(
          "div",
          { class: "object" },
          shown.filter((field) => field.isRequired).map((field) => field.control.element),
          // Optional extras (parameter_overrides, say) stay folded: most answers never need them.
          optional.length > 0
            ? h(
                "details",
                { class: "optional" },
                h("summary", {}, `Optional: ${optional.map((field) => field.label).join(", ")}`),
                optional.map((field) => field.control.element),
              )
            : null,
        );
  return {
    element,
    onlyOptional: shown.length > 0 && optional.length === shown.length,
    read() {
      /** @type {Record<string, unknown>} */
      const value = {};
      /** @type {string[]} */
      const said = [];
      for (const field of fields) {
        const result = field.control.read();
        if (!result.ok) return result;
        if (result.value !== undefined) value[field.name] = result.value;
        else if (field.isRequired) return fail(`${field.label} is required.`);
        if (result.text) said.push(result.text);
      }
      return ok(value, said.join(", ") || undefined);
    },
  };
}

/** @param {Schema[]} branches @param {Context} ctx @returns {Control} */
function oneOfControl(branches, ctx) {
  const items = branches.map((branch, index) => {
    const id = `${ctx.id}-${index}`;
    const radio = h("input", { type: "radio", name: ctx.id, id: `${id}-pick`, value: String(index) });
    const inner = controlFor(branch, { ...ctx, id, label: `Answer ${index + 1}`, required: true });
    const { title, detail } = branchTitle(branch, index, ctx.titles);
    // Typing into a branch's own field picks that branch, as "Other: ____" does on paper.
    inner.element?.addEventListener("focusin", () => (radio.checked = true));
    const body = inner.element ? h("div", { class: "branch-body" }, inner.element) : null;
    const element = h(
      "div",
      { class: "branch" },
      h("label", { class: "radio", for: radio.id, title: detail || undefined }, radio, h("span", {}, title)),
      body,
    );
    return { radio, inner, body, element, title };
  });
  // Extras that every option may carry (parameter_overrides) are offered for the chosen one only; required fields stay visible so typing can pick their branch.
  const fold = () => items.forEach((item) => item.body && item.inner.onlyOptional && (item.body.hidden = !item.radio.checked));
  fold();
  const element = h(
    "fieldset",
    { class: "choice", onchange: fold },
    h("legend", {}, ctx.label),
    items.map((item) => item.element),
  );
  return {
    element,
    read() {
      const chosen = items.find((item) => item.radio.checked);
      if (!chosen) return fail("Choose one of the answers.", items[0]?.radio);
      const result = chosen.inner.read();
      // A branch that is only its choice reads as its title; one with a field of its own, as what was typed.
      return result.ok ? ok(result.value, result.text ?? chosen.title) : result;
    },
  };
}

/** @param {Schema} branch @param {number} index @param {Map<string, string>} titles */
function branchTitle(branch, index, titles) {
  const properties = branch.properties ?? {};
  const required = Array.isArray(branch.required) ? branch.required : [];
  const selected = properties.selectedId;
  if (selected && "const" in selected) {
    const id = String(selected.const);
    return { title: selected.title || titles.get(id) || humanize(id), detail: id };
  }
  if (typeof branch.title === "string" && branch.title) return { title: branch.title, detail: required.join(", ") };
  if (required.includes("freeText")) return { title: "Your own words", detail: "freeText" };
  if (required.includes("action")) return { title: "Action", detail: "action" };
  if (required.includes("value")) return { title: "A resource value", detail: "value" };
  return { title: required.length ? required.map(humanize).join(", ") : `Answer ${index + 1}`, detail: required.join(", ") };
}

/** @param {unknown[]} values @param {unknown[]} names the schema's own display names, by position @param {Context} ctx @returns {Control} */
function enumControl(values, names, ctx) {
  const titleOf = (/** @type {unknown} */ value, /** @type {number} */ index) =>
    ctx.titles.get(String(value)) ?? (typeof names[index] === "string" ? String(names[index]) : humanize(String(value)));
  if (values.length <= RADIO_LIMIT) {
    const radios = values.map((value, index) =>
      h("input", { type: "radio", name: ctx.id, id: `${ctx.id}-${index}`, value: String(index) }),
    );
    const element = h(
      "fieldset",
      { class: "choice" },
      h("legend", { title: ctx.key }, ctx.label),
      values.map((value, index) =>
        h(
          "label",
          { class: "radio", for: `${ctx.id}-${index}`, title: String(value) },
          radios[index],
          h("span", {}, titleOf(value, index)),
        ),
      ),
    );
    return {
      element,
      read() {
        const index = radios.findIndex((radio) => radio.checked);
        if (index >= 0) return ok(values[index], titleOf(values[index], index));
        return ctx.required ? fail(`Choose an answer for “${ctx.label}”.`, radios[0]) : ok(undefined);
      },
    };
  }
  const select = h(
    "select",
    { id: ctx.id },
    h("option", { value: "" }, "Choose…"),
    values.map((value, index) => h("option", { value: String(index), title: String(value) }, titleOf(value, index))),
  );
  return {
    element: labelled(ctx, select),
    read() {
      const index = Number(select.value);
      if (select.value !== "") return ok(values[index], titleOf(values[index], index));
      return ctx.required ? fail(`Choose an answer for “${ctx.label}”.`, select) : ok(undefined);
    },
  };
}

/** @param {Schema} schema @param {Context} ctx @returns {Control} */
function textControl(schema, ctx) {
  const input = h("input", { type: "text", id: ctx.id, autocomplete: "off", spellcheck: "false" });
  const minLength = Number(schema.minLength ?? 0);
  return {
    element: labelled(ctx, input),
    read() {
      if (input.value === "") return ctx.required ? fail(`Fill in ${ctx.label}.`, input) : ok(undefined);
      if (input.value.length < minLength) return fail(`${ctx.label} needs at least ${minLength} characters.`, input);
      return ok(input.value, `“${input.value}”`);
    },
  };
}

/** @param {Context} ctx @returns {Control} */
function booleanControl(ctx) {
  const input = h("input", { type: "checkbox", id: ctx.id });
  return {
    element: h("div", { class: "field check" }, h("label", { for: ctx.id, title: ctx.key }, input, " ", ctx.label)),
    read: () => ok(input.checked, `${ctx.label}: ${input.checked ? "yes" : "no"}`),
  };
}

/** @param {Schema} schema @param {Context} ctx @returns {Control} */
function numberControl(schema, ctx) {
  const input = h("input", { type: "number", id: ctx.id, step: schema.type === "integer" ? "1" : "any" });
  return {
    element: labelled(ctx, input),
    read() {
      if (input.value === "") return ctx.required ? fail(`Fill in ${ctx.label}.`, input) : ok(undefined);
      const value = Number(input.value);
      if (!Number.isFinite(value) || (schema.type === "integer" && !Number.isInteger(value)))
        return fail(`${ctx.label} must be a${schema.type === "integer" ? "n integer" : " number"}.`, input);
      return ok(value);
    },
  };
}

/** @param {Context} ctx @returns {Control} */
function jsonControl(ctx) {
  const input = h("textarea", { id: ctx.id, rows: 3, spellcheck: "false", placeholder: "JSON, e.g. {}" });
  return {
    element: labelled(ctx, input),
    read() {
      if (input.value.trim() === "") return ctx.required ? fail(`Fill in ${ctx.label} as JSON.`, input) : ok(undefined);
      try {
        return ok(JSON.parse(input.value));
      } catch {
        return fail(`${ctx.label} is not valid JSON.`, input);
      }
    },
  };
}
