// @ts-check
/**
 * Names for people: what the page shows where the wire has ids, keys and
 * long comments. The raw text always stays one hover or click away (a
 * tooltip, the inspector), so nothing is lost by saying it plainly here.
 */

/** @typedef {import("./run-model.js").Span} Span */
/** @typedef {import("./run-model.js").RunModel} RunModel */

/** A run's title, a fixture's line: longer than this is cut at a word. */
const SHORT = 100;

/**
 * Cuts at the last word boundary before `max`, with an ellipsis.
 * @param {string} text @param {number} [max]
 */
export function truncate(text, max = SHORT) {
  const line = text.replace(/\s+/g, " ").trim();
  if (line.length <= max) return line;
  const cut = line.slice(0, max - 1);
  const space = cut.lastIndexOf(" ");
  return `${(space > max / 2 ? cut.slice(0, space) : cut).replace(/[\s,;:.(–-]+$/, "")}…`;
}

/**
 * A fixture's description as one short line: its first sentence, without
 * the asides in parentheses and braces (how to send it, where its format
 * is, a sample frame), cut at a word when that is still long.
 * @param {string} description
 */
export function firstSentence(description) {
  const plain = description
    .replace(/\s*\([^()]*\)|\s*\{[^{}]*\}/g, "")
    .replace(/\s+/g, " ")
    .trim();
  return truncate(/^.*?[.!?](?=\s|$)/.exec(plain)?.[0] ?? plain);
}

/**
 * A schema key as words: `safeSummary` → "Safe summary", `parameter_overrides` → "Parameter overrides".
 * @param {string} key
 */
export function humanize(key) {
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/[_-]+/g, " ")
    .trim()
    .toLowerCase();
  return words ? words.charAt(0).toUpperCase() + words.slice(1) : key;
}

/** A candidate step's id says whose step it is: `candidate:<candidate id>:<step>`. */
const CANDIDATE_STEP = /^candidate:(.+):([^:]+)$/;

/**
 * A span as a person names it: "Step: generate", "Tool: read_file",
 * "Text (assistant) · plan", "Reasoning · plan". Ids never make the name;
 * the span's own label (an id, at times) stays in the row's tooltip.
 * @param {Span} span @param {RunModel} model
 */
export function spanName(span, model) {
  switch (span.kind) {
    case "step": {
      const candidate = CANDIDATE_STEP.exec(span.label);
      if (!candidate) return `Step: ${span.label}`;
      const [, id = "", step = ""] = candidate;
      return `Step: ${step} · ${model.candidateNames.get(id) ?? "candidate"}`;
    }
    case "tool": {
      // An MCP tool's name carries its server: mcp__<server>__<tool>.
      const mcp = /^mcp__(.+?)__(.+)$/.exec(span.label);
      return mcp ? `Tool: ${mcp[2]} (${mcp[1]})` : `Tool: ${span.label}`;
    }
    case "message": {
      const [role, ...owner] = span.label.split(" · ");
      return `Text (${role})${owner.length ? ` · ${owner.join(" · ")}` : ""}`;
    }
    case "reasoning": {
      // Without an owner the label is the message id: the id is no name.
      const owner = span.label.startsWith("reasoning · ") ? span.label.slice("reasoning · ".length) : "";
      return owner ? `Reasoning · ${owner}` : "Reasoning";
    }
    default:
      return span.label;
  }
}

/**
 * What a RUN_ERROR says, with the reason the service gave beside its message
 * (`metadata["iac-code"].detail`: the kernel's own words, a replay's drop).
 * @param {Record<string, any>} event
 */
export function runErrorText(event) {
  const detail = event.metadata?.["iac-code"]?.detail;
  const said = `${event.code ?? "RUN_ERROR"}: ${event.message ?? ""}`.trim();
  return typeof detail === "string" && detail ? `${said} (${detail})` : said;
}

/**
 * A fixture section's answer as words: its `when` is the text an answer
 * must hold (`"decision":"allow_once"`), so the values it names are read
 * out: "Allow once". Anything else is shown as written.
 * @param {string} when
 */
export function answerLabel(when) {
  const values = [...when.matchAll(/"[^"]*"\s*:\s*"([^"]*)"/g)].map((match) => humanize(match[1] ?? ""));
  return values.length > 0 ? values.join(", ") : when;
}
