// @ts-check
/**
 * The page's runs kept across a reload, in the tab's sessionStorage: what
 * each run received (its events with their receive times), its title,
 * thread, status, and the request it sent with the token already replaced
 * (run-request.js). Never the bearer token: it stays in main.js's memory.
 *
 * sessionStorage holds about 5 MB per origin, so the newest runs are kept
 * within `MAX_KEPT_RUNS` and `MAX_KEPT_CHARS`; older ones are dropped
 * first, and a run larger than the whole budget is not kept at all. A tab
 * closed forgets them, as the thread ids it ran on are this tab's.
 */

const KEY = "iac-code-agui.sandbox.session.v1";
export const MAX_KEPT_RUNS = 20;
/** UTF-16 code units, as the storage counts them: 4 Mi of them fit the common 5 MB quota with room for the rest. */
export const MAX_KEPT_CHARS = 2 * 1024 * 1024;

/**
 * @typedef {object} KeptRun
 * @property {string} title
 * @property {string} runId
 * @property {string | undefined} threadId
 * @property {string} status
 * @property {string} detail
 * @property {number} elapsedMs
 * @property {number} heartbeats
 * @property {Array<[number, Record<string, any>]>} events receive time in ms, event
 * @property {import("./run-request.js").SentRequest | undefined} request
 * @property {import("./run-request.js").ReceivedResponse | undefined} response
 */
/** What a resume repeats (main.js's Thread). @typedef {{ id: string, rosInvocationId: string, forwardedProps: Record<string, any> | undefined }} KeptThread */
/** @typedef {{ thread: KeptThread | undefined, runs: KeptRun[] }} KeptSession */

/** @returns {KeptSession} */
export function loadSession() {
  try {
    const text = sessionStorage.getItem(KEY);
    const value = text ? JSON.parse(text) : undefined;
    if (!value || !Array.isArray(value.runs)) return { thread: undefined, runs: [] };
    return { thread: typeof value.thread?.id === "string" ? value.thread : undefined, runs: value.runs.filter(isKeptRun) };
  } catch {
    // Storage refused (a privacy setting) or a document from another version: start empty.
    return { thread: undefined, runs: [] };
  }
}

/** @param {any} run @returns {run is KeptRun} */
const isKeptRun = (run) => run && typeof run.title === "string" && Array.isArray(run.events);

/**
 * Keeps the newest runs that fit; returns how many were kept.
 * @param {KeptThread} thread @param {KeptRun[]} runs oldest first
 */
export function saveSession(thread, runs) {
  const texts = runs.map((run) => JSON.stringify(run));
  let kept = Math.min(runs.length, MAX_KEPT_RUNS);
  const size = (/** @type {number} */ count) => texts.slice(texts.length - count).reduce((sum, text) => sum + text.length + 1, 0);
  while (kept > 0 && size(kept) > MAX_KEPT_CHARS) kept -= 1;
  const document = `{"thread":${JSON.stringify(thread)},"runs":[${texts.slice(texts.length - kept).join(",")}]}`;
  try {
    sessionStorage.setItem(KEY, document);
    return kept;
  } catch {
    // Over the quota after all (other keys of the origin share it): keep the thread at least.
    try {
      sessionStorage.setItem(KEY, JSON.stringify({ thread, runs: [] }));
    } catch {
      // Storage refused altogether: the page works on, it only forgets on reload.
    }
    return 0;
  }
}

/** Forgets the kept runs and thread (nothing in the page uses this yet but the specs' own clean-up). */
export function clearSession() {
  try {
    sessionStorage.removeItem(KEY);
  } catch {
    // Nothing kept, then.
  }
}
