// @ts-check
/**
 * The service's threads (`GET /extensions/iac-code/v1/threads`), newest
 * first, each with its status and an Attach button that watches it through
 * the connect route (`POST …/threads/{threadId}/connect`): what a person
 * picks from after a reload, or to look at a thread another client runs.
 */
import { h } from "./dom.js";
import { errorText } from "./sse.js";

export const THREADS_PATH = "/extensions/iac-code/v1/threads";
export const LISTED = 50;

/** @param {string} threadId */
export const connectPath = (threadId) => `${THREADS_PATH}/${encodeURIComponent(threadId)}/connect`;

/** @typedef {{ threadId: string, status: string, updatedAt: string | null, pendingInterrupts: number }} ListedThread */

const STATUS_TEXT = /** @type {Record<string, string>} */ ({
  running: "running",
  paused: "waiting for an answer",
  idle: "idle",
});

/** @param {string | null} iso */
function when(iso) {
  if (!iso) return "";
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? "" : date.toLocaleString();
}

/**
 * @param {{
 *   panel: HTMLDetailsElement,
 *   list: HTMLElement,
 *   refresh: HTMLButtonElement,
 *   headers: () => Record<string, string>,
 *   attach: (threadId: string) => void,
 *   say: (message: string, tone?: "info" | "error" | "busy") => void,
 * }} page
 */
export function threadsPanel(page) {
  const load = async () => {
    page.refresh.disabled = true;
    try {
      const response = await fetch(`${THREADS_PATH}?limit=${LISTED}`, { headers: page.headers() });
      if (!response.ok) {
        const reason = response.status === 401 ? "the service wants a bearer token" : errorText(await response.text());
        page.list.replaceChildren(h("li", { class: "empty" }, `Could not list the threads: ${reason}.`));
        page.say(`Could not list the service's threads (HTTP ${response.status}): ${reason}.`, "error");
        return;
      }
      /** @type {{ threads: ListedThread[] }} */
      const { threads } = await response.json();
      page.list.replaceChildren(
        ...(threads.length === 0
          ? [h("li", { class: "empty" }, "The service has no threads yet: run something first.")]
          : threads.map((thread) => row(thread, page.attach))),
      );
      page.say(
        `${threads.length} thread${threads.length === 1 ? "" : "s"} on the service${threads.length === LISTED ? " (the newest ones)" : ""}.`,
      );
    } catch (error) {
      page.say(`Could not list the service's threads: ${error}`, "error");
    } finally {
      page.refresh.disabled = false;
    }
  };
  page.refresh.addEventListener("click", () => void load());
  // Opening the panel lists what is there now; Refresh asks again.
  page.panel.addEventListener("toggle", () => page.panel.open && void load());
  return { load };
}

/** @param {ListedThread} thread @param {(threadId: string) => void} attach */
const row = (thread, attach) =>
  h(
    "li",
    { class: "thread-row", "data-thread": thread.threadId },
    h("code", { class: "thread-name", title: thread.threadId }, thread.threadId),
    h("span", { class: `pill thread-status status-${thread.status}` }, STATUS_TEXT[thread.status] ?? thread.status),
    h("span", { class: "thread-when" }, when(thread.updatedAt)),
    h(
      "button",
      { type: "button", class: "small", "aria-label": `Attach to ${thread.threadId}`, onclick: () => attach(thread.threadId) },
      "Attach",
    ),
  );
