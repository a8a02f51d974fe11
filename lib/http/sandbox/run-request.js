// @ts-check
/**
 * What a run sent and what came back, for a person to repeat it outside the
 * page: the request as a cURL command or a `fetch` call, and the headers
 * both ways. The bearer token never appears: the Authorization header is
 * written with a `$TOKEN` placeholder (a shell variable for cURL, a
 * constant for fetch), so a copied command can be pasted into a ticket.
 */
import { h } from "./dom.js";

/** @typedef {{ url: string, method: string, headers: Record<string, string>, body: string }} SentRequest */
/** @typedef {{ status: number, statusText: string, headers: Array<[string, string]> }} ReceivedResponse */

export const TOKEN_PLACEHOLDER = "$TOKEN";

/**
 * The request as it is kept and shown: the token replaced by the placeholder.
 * @param {string} url @param {Record<string, string>} headers @param {string} body
 * @returns {SentRequest}
 */
export function sentRequest(url, headers, body) {
  /** @type {Record<string, string>} */
  const shown = {};
  for (const [name, value] of Object.entries(headers))
    shown[name] = name.toLowerCase() === "authorization" ? value.replace(/^(Bearer\s+).*$/i, `$1${TOKEN_PLACEHOLDER}`) : value;
  return { url, method: "POST", headers: shown, body };
}

/** @param {Response} response @returns {ReceivedResponse} */
export const receivedResponse = (response) => ({
  status: response.status,
  statusText: response.statusText,
  headers: [...response.headers.entries()],
});

/** A single-quoted shell word. @param {string} text */
const shellQuote = (text) => `'${text.replace(/'/g, `'\\''`)}'`;

/** @param {SentRequest} request */
export function asCurl(request) {
  const lines = [`curl -N -X ${request.method} ${shellQuote(request.url)}`];
  for (const [name, value] of Object.entries(request.headers)) {
    // Double quotes only around the placeholder's header, so the shell puts the token in.
    lines.push(value.includes(TOKEN_PLACEHOLDER) ? `-H "${name}: ${value}"` : `-H ${shellQuote(`${name}: ${value}`)}`);
  }
  lines.push(`--data-raw ${shellQuote(request.body)}`);
  return lines.join(" \\\n  ");
}

/** @param {SentRequest} request */
export function asFetch(request) {
  const headers = Object.entries(request.headers)
    .map(([name, value]) =>
      value.includes(TOKEN_PLACEHOLDER)
        ? `    ${JSON.stringify(name)}: \`${value.replace(TOKEN_PLACEHOLDER, "${TOKEN}")}\`,`
        : `    ${JSON.stringify(name)}: ${JSON.stringify(value)},`,
    )
    .join("\n");
  const usesToken = Object.values(request.headers).some((value) => value.includes(TOKEN_PLACEHOLDER));
  return [
    ...(usesToken ? ['const TOKEN = "…"; // the service\'s bearer token', ""] : []),
    `const response = await fetch(${JSON.stringify(request.url)}, {`,
    `  method: ${JSON.stringify(request.method)},`,
    "  headers: {",
    headers,
    "  },",
    `  body: JSON.stringify(${JSON.stringify(JSON.parse(request.body), null, 2).replace(/\n/g, "\n  ")}),`,
    "});",
  ].join("\n");
}

/** @param {Array<[string, string]>} entries */
const headerLines = (entries) => entries.map(([name, value]) => `${name}: ${value}`).join("\n");

/** The headers both ways, as the inspector shows them. @param {SentRequest} request @param {ReceivedResponse | undefined} response */
export const headersText = (request, response) =>
  [
    `${request.method} ${new URL(request.url).pathname}`,
    headerLines(Object.entries(request.headers)),
    "",
    response ? `HTTP ${response.status} ${response.statusText}`.trim() : "(no response yet)",
    response ? headerLines(response.headers) : "",
  ].join("\n");

/**
 * A run's request buttons: copy it as cURL or fetch, and show the headers
 * both ways. Each shows its text in the inspector (`show`), where it can be
 * read and selected when the clipboard is refused.
 * @param {{ request: SentRequest, response: () => ReceivedResponse | undefined, show: (title: string, text: string) => void, say: (message: string, tone?: "info" | "error" | "busy") => void, name: string }} run
 */
export function requestButtons({ request, response, show, say, name }) {
  /** @param {string} what @param {string} text */
  const copy = async (what, text) => {
    show(`${name} as ${what}`, text);
    try {
      await navigator.clipboard.writeText(text);
      say(`Copied ${name} as ${what}; the token is written as ${TOKEN_PLACEHOLDER}.`);
    } catch {
      say(`The clipboard refused: ${name} as ${what} is in the inspector, to select and copy.`, "error");
    }
  };
  return h(
    "span",
    { class: "request-buttons" },
    h("button", { type: "button", class: "small", onclick: () => void copy("cURL", asCurl(request)) }, "Copy as cURL"),
    h("button", { type: "button", class: "small", onclick: () => void copy("fetch", asFetch(request)) }, "Copy as fetch"),
    h(
      "button",
      {
        type: "button",
        class: "small",
        onclick: () => {
          show(`${name}: headers`, headersText(request, response()));
          say(`The headers ${name} sent and received are in the inspector.`);
        },
      },
      "Headers",
    ),
  );
}
