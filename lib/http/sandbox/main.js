// @ts-check
/**
 * The sandbox page: runs a fixture, a free-text message or a raw
 * RunAgentInput against this service, attaches to an execution through the
 * subscribe route, feeds the streamed AG-UI events to the timeline, and
 * answers interrupts with a resume on the same thread. The bearer token
 * stays in this module's memory: never in storage, cookies or the URL.
 *
 * The page's runs and thread outlive a reload (session-store.js); every
 * status message lands in the visible status line at the foot of the page,
 * which is also the screen reader's live region; the inspector and the
 * thread-state panel follow the run the user last started or clicked in.
 */
import { $, h, randomId } from "./dom.js";
import { Filters } from "./filters.js";
import { interruptForm } from "./interrupt-form.js";
import { firstSentence } from "./labels.js";
import { forgetRuns, keepControls, keepRun } from "./run-files.js";
import { checkRunInput } from "./run-editor.js";
import { RunModel } from "./run-model.js";
import { receivedResponse, sentRequest } from "./run-request.js";
import { PageRuns } from "./page-runs.js";
import { loadSession, saveSession } from "./session-store.js";
import { errorText, sseRecords } from "./sse.js";
import { StatePanel } from "./state-panel.js";
import { connectPath, threadsPanel } from "./threads-panel.js";
import { Timeline } from "./timeline.js";

/** @typedef {{ name: string, description: string, pipeline: boolean }} Fixture */
/**
 * What a resume must repeat: the same thread, `rosInvocationId` and `cwd` as the run it answers.
 * @typedef {{ id: string, rosInvocationId: string, forwardedProps: Record<string, any> | undefined }} Thread
 */
/** @typedef {import("./page-runs.js").View} View */

/** Where an execution is watched (README, "Observers and the thread status"). @param {string} executionId */
const subscribePath = (executionId) => `/extensions/iac-code/v1/executions/${encodeURIComponent(executionId)}/subscribe`;
const SESSION_EVENT = "iac-code.session.v1";

/** Resume errors that leave the interrupts answerable (README, "Interrupts and resume"): the form stays open for another try. */
const ANSWER_NOT_TAKEN = new Set(["INCOMPLETE_RESUME", "UNKNOWN_INTERRUPT", "RESUME_PAYLOAD_INVALID"]);

const ui = {
  form: $("#run-form", HTMLFormElement),
  fixture: $("#fixture", HTMLSelectElement),
  description: $("#fixture-description", HTMLElement),
  pipeline: $("#pipeline", HTMLInputElement),
  run: $("#run", HTMLButtonElement),
  stop: $("#stop", HTMLButtonElement),
  newThread: $("#new-thread", HTMLButtonElement),
  clearRuns: $("#clear-runs", HTMLButtonElement),
  token: $("#token", HTMLInputElement),
  cwd: $("#cwd", HTMLInputElement),
  language: $("#language", HTMLSelectElement),
  thread: $("#thread-id", HTMLElement),
  service: $("#service", HTMLElement),
  status: $("#status", HTMLElement),
  timeline: $("#timeline", HTMLElement),
  inspectorTitle: $("#inspector-title", HTMLElement),
  inspectorBody: $("#inspector-body", HTMLElement),
  fixtureField: $("#fixture-field", HTMLElement),
  message: $("#message", HTMLInputElement),
  sendMessage: $("#send-message", HTMLButtonElement),
  rawEditor: $("#raw-editor", HTMLDetailsElement),
  rawInput: $("#raw-input", HTMLTextAreaElement),
  rawFill: $("#raw-fill", HTMLButtonElement),
  rawSend: $("#raw-send", HTMLButtonElement),
  rawErrors: $("#raw-errors", HTMLElement),
  attachThread: $("#attach-thread", HTMLInputElement),
  attachExecution: $("#attach-execution", HTMLInputElement),
  attach: $("#attach", HTMLButtonElement),
  threadsPanel: $("#threads-panel", HTMLDetailsElement),
  threadsList: $("#threads-list", HTMLElement),
  threadsRefresh: $("#threads-refresh", HTMLButtonElement),
};

let token = "";
/** @type {AbortController | undefined} */
let running;
/** The attached view streaming now, if any: it runs beside a run, never in its way. @type {AbortController | undefined} */
let watching;
/** @type {Map<string, Fixture>} */
const fixtures = new Map();
/** Whether the user set "Run as pipeline" themselves since a fixture set it: a fixture's own mode is not a free-text message's. */
let pipelineByUser = false;
const session = loadSession();
let thread = useThread(session.thread ?? newThread());

const timeline = new Timeline(ui.timeline, (title, value) => runs.inspect(title, value, runs.lookingAt));
const filters = new Filters(
  {
    type: $("#find-type", HTMLSelectElement),
    name: $("#find-name", HTMLInputElement),
    search: $("#find-search", HTMLInputElement),
    clear: $("#find-clear", HTMLButtonElement),
    regex: $("#find-regex", HTMLInputElement),
    error: $("#find-error", HTMLElement),
  },
  (matches, active) => timeline.setFilter(matches, active),
);
const statePanel = new StatePanel({
  root: $("#state-panel", HTMLElement),
  title: $("#state-title", HTMLElement),
  state: $("#state-json", HTMLElement),
  conversation: $("#conversation", HTMLElement),
  note: $("#state-note", HTMLElement),
});
const runs = new PageRuns({ inspectorTitle: ui.inspectorTitle, inspectorBody: ui.inspectorBody, statePanel, say });

/** @returns {Thread} */
function newThread() {
  return { id: randomId("sandbox-thread"), rosInvocationId: randomId("sandbox-ros"), forwardedProps: undefined };
}

/** @param {Thread} next */
function useThread(next) {
  ui.thread.textContent = next.id;
  ui.attachThread.value = next.id;
  return next;
}

/**
 * Every message for the user goes here: the status line is on screen (not only for screen readers).
 * @param {string} message @param {"info" | "error" | "busy"} [tone]
 */
function say(message, tone = "info") {
  ui.status.textContent = message;
  ui.status.dataset.tone = tone;
}

/** What a reload brings back (session-store.js): the runs, newest kept, and the page's thread. */
function persist() {
  saveSession(
    thread,
    runs.all.map(({ view: { model }, threadId, request, response }) => ({
      title: model.title,
      runId: model.runId,
      threadId,
      status: model.status,
      detail: model.detail,
      elapsedMs: model.elapsedMs,
      heartbeats: model.heartbeats,
      events: model.events.map((entry) => /** @type {[number, Record<string, any>]} */ ([Math.round(entry.at), entry.event])),
      request,
      response,
    })),
  );
}

/** The runs of the page before the reload, drawn again as they ended. */
function restoreRuns() {
  /** The page thread's newest run, which may still wait for an answer. @type {{ model: RunModel, view: ReturnType<Timeline["addRun"]> } | undefined} */
  let newestOnThread;
  for (const saved of session.runs) {
    const model = new RunModel({ runId: saved.runId, title: saved.title, resume: false });
    const view = timeline.addRun(model);
    const tools = keepRun(view);
    for (const [at, event] of saved.events) view.addEvent(model.add(event, at));
    model.status = /** @type {RunModel["status"]} */ (saved.status);
    model.detail = saved.detail;
    model.elapsedMs = saved.elapsedMs;
    model.heartbeats = saved.heartbeats;
    view.update();
    view.renderChart();
    tools.sync();
    runs.adopt(view, { threadId: saved.threadId, request: saved.request, response: saved.response });
    if (saved.threadId === thread.id) newestOnThread = { model, view };
  }
  // A pause the page had not answered yet is still answerable: its thread is the page's, and the service keeps it.
  if (newestOnThread?.model.status === "interrupt" && newestOnThread.model.interrupts.length > 0)
    offerAnswers(newestOnThread.model, newestOnThread.view);
  const count = session.runs.length;
  if (count > 0) say(`${count} run${count > 1 ? "s" : ""} from before the reload; the page's thread is still ${thread.id}.`);
}

/** @returns {Record<string, string>} */
function authorization() {
  return token ? { authorization: `Bearer ${token}` } : {};
}

/** @param {boolean} busy */
function setBusy(busy) {
  ui.run.disabled = busy || fixtures.size === 0;
  ui.sendMessage.disabled = busy;
  ui.rawSend.disabled = busy;
  ui.newThread.disabled = busy;
  ui.clearRuns.disabled = busy;
  ui.stop.disabled = !busy && watching === undefined;
  ui.timeline.setAttribute("aria-busy", String(busy));
}

async function loadService() {
  const [health, list] = await Promise.all([
    fetch("/health", { headers: authorization() }),
    fetch("/sandbox/fixtures", { headers: authorization() }),
  ]);
  if (health.status === 401 || list.status === 401) {
    ui.service.textContent = "needs a bearer token";
    say("This service wants a bearer token: paste it into the token field.", "error");
    return;
  }
  if (health.ok) {
    const info = await health.json();
    ui.service.textContent = `iac-code-agui ${info.version} · AG-UI ${info.protocolVersion} · ${info.executionKernel}`;
  }
  // A fixture list that failed (the kernel down, say) leaves free text and raw input, as a kernel without one does.
  /** @type {{ fixtures: Fixture[], defaults?: { cwd?: string } }} */
  const body = list.ok ? await list.json() : { fixtures: [] };
  const previous = ui.fixture.value;
  fixtures.clear();
  for (const fixture of body.fixtures) fixtures.set(fixture.name, fixture);
  ui.fixture.replaceChildren(...body.fixtures.map((fixture) => h("option", { value: fixture.name }, fixture.name)));
  if (fixtures.has(previous)) ui.fixture.value = previous;
  if (!ui.cwd.value && body.defaults?.cwd) ui.cwd.value = body.defaults.cwd;
  describeFixture();
  // A kernel that lists no fixtures (any but the demo kernel) still takes free text and raw input.
  ui.fixtureField.hidden = fixtures.size === 0;
  ui.pipeline.closest(".field")?.toggleAttribute("hidden", fixtures.size === 0);
  setBusy(running !== undefined);
  say(
    fixtures.size > 0
      ? `${fixtures.size} fixtures. Pick one and press Run, or type a message.`
      : "This kernel lists no fixtures: type a message, or write a RunAgentInput.",
  );
  if (fixtures.size === 0) ui.description.textContent = "This kernel lists no fixtures: send it free text, or a RunAgentInput of your own.";
  if (!list.ok) {
    ui.description.textContent = `Could not list the kernel's fixtures (HTTP ${list.status}): send it free text, or a RunAgentInput of your own.`;
    say(ui.description.textContent, "error");
  }
}

function describeFixture() {
  const fixture = fixtures.get(ui.fixture.value);
  // One line on the page; the whole comment is the tooltip.
  ui.description.textContent = fixture ? firstSentence(fixture.description) : "";
  ui.description.title = fixture?.description ?? "";
  ui.pipeline.checked = fixture?.pipeline ?? false;
  pipelineByUser = false;
}

/**
 * POSTs one RunAgentInput (or, to watch an execution, a subscribe body) and streams its answer into a new run section.
 * @param {Record<string, any>} body
 * @param {string} title
 * @param {{ path?: string, watch?: boolean }} [options] `watch`: an attached view, which streams beside a run
 */
async function stream(body, title, { path = "/", watch = false } = {}) {
  const model = new RunModel({ runId: body.runId ?? "(observer)", title, resume: body.resume !== undefined });
  const view = timeline.addRun(model);
  const kept = keepRun(view);
  const headers = { "content-type": "application/json", accept: "text/event-stream", ...authorization() };
  const text = JSON.stringify(body);
  const run = runs.adopt(view, { threadId: body.threadId, request: sentRequest(new URL(path, location.href).href, headers, text) });
  runs.lookAt(run);
  const controller = new AbortController();
  if (watch) watching = controller;
  else running = controller;
  setBusy(running !== undefined);
  say(`Run ${view.number} (${title}) is streaming…`, "busy");
  const started = performance.now();
  try {
    const response = await fetch(path, { method: "POST", headers, body: text, signal: controller.signal });
    run.response = receivedResponse(response);
    if (!response.ok || !response.body || !(response.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
      model.status = "refused";
      model.detail = `HTTP ${response.status}: ${errorText(await response.text())}`;
      return model;
    }
    for await (const record of sseRecords(response.body)) {
      kept.received(record.raw);
      if (record.data === undefined) {
        if (record.comments.includes("heartbeat")) model.heartbeats += 1;
        view.update();
        continue;
      }
      /** @type {Record<string, any>} */
      let event;
      try {
        event = JSON.parse(record.data);
      } catch {
        model.detail = `An SSE record that is not JSON: ${record.data.slice(0, 200)}`;
        continue;
      }
      view.addEvent(model.add(event, performance.now() - started));
      filters.noteType(event);
      if (runs.showsState(run)) statePanel.apply(event);
      if (event.type === "CUSTOM" && event.name === SESSION_EVENT) offerAttach(event.value);
    }
    if (model.status === "streaming") {
      model.status = "cut";
      model.detail = "The stream ended without RUN_FINISHED or RUN_ERROR.";
    }
  } catch (error) {
    model.status = controller.signal.aborted ? "stopped" : "cut";
    model.detail = controller.signal.aborted
      ? "Stopped here: the page disconnected, so the service cancels the task."
      : `The request failed: ${error}`;
  } finally {
    if (watch) watching = undefined;
    else running = undefined;
    model.elapsedMs = performance.now() - started;
    setBusy(running !== undefined);
    view.update();
    view.renderChart();
    const failed = ["error", "refused", "cut"].includes(model.status);
    say(
      `Run ${view.number} (${title}): ${model.status === "interrupt" ? "waiting for an answer" : model.status}${failed && model.detail ? `. ${model.detail}` : "."}`,
      failed ? "error" : "info",
    );
    if (model.status === "interrupt" && !watch) offerAnswers(model, view);
    persist();
  }
  return model;
}

/** A run's session event names its execution: the attach form offers it. @param {Record<string, any> | undefined} session */
function offerAttach(session) {
  if (typeof session?.executionId !== "string" || typeof session.threadId !== "string") return;
  ui.attachThread.value = session.threadId;
  ui.attachExecution.value = session.executionId;
}

/**
 * @param {RunModel} model
 * @param {ReturnType<Timeline["addRun"]>} view
 */
function offerAnswers(model, view) {
  const form = interruptForm(model.interrupts, async (resume, summary) => {
    const next = await stream(
      {
        threadId: thread.id,
        runId: randomId("sandbox-run"),
        state: {},
        messages: [],
        tools: [],
        context: [],
        forwardedProps: thread.forwardedProps,
        resume,
      },
      `resume · ${summary}`,
    );
    const code = next.events.findLast((entry) => entry.event.type === "RUN_ERROR")?.event.code;
    if (next.status === "refused" || ANSWER_NOT_TAKEN.has(code)) return false;
    model.status = "answered";
    view.update();
    persist();
    return true;
  });
  view.attach(form.element);
  form.focus();
}

/**
 * The RunAgentInput this page sends for one user message, on the page's thread with the form's settings.
 * @param {string} text @param {boolean} pipeline
 */
function runBody(text, pipeline) {
  const iacCode = {
    schemaVersion: 1,
    rosInvocationId: thread.rosInvocationId,
    cwd: ui.cwd.value,
    ...(pipeline ? { runMode: "pipeline" } : {}),
    ...(ui.language.value ? { preferredLanguage: ui.language.value } : {}),
  };
  return {
    threadId: thread.id,
    runId: randomId("sandbox-run"),
    state: {},
    messages: [{ id: randomId("sandbox-msg"), role: "user", content: text }],
    tools: [],
    context: [],
    forwardedProps: { iacCode },
  };
}

/** @param {Record<string, any>} body @param {string} title */
function send(body, title) {
  thread.forwardedProps = body.forwardedProps;
  const pipeline = body.forwardedProps?.iacCode?.runMode === "pipeline";
  void stream(body, `${title}${pipeline ? " · pipeline" : ""}`);
}

ui.form.addEventListener("submit", (event) => {
  event.preventDefault();
  const name = ui.fixture.value;
  if (!name || running) return;
  const pipeline = pipelineByUser ? ui.pipeline.checked : (fixtures.get(name)?.pipeline ?? false);
  send(runBody(name, pipeline), name);
  // The tick was this run's: the next message is a chat again unless the user ticks it (Run picks the fixture's mode again).
  ui.pipeline.checked = false;
  pipelineByUser = false;
});
ui.pipeline.addEventListener("change", () => (pipelineByUser = true));

function sendMessage() {
  const text = ui.message.value.trim();
  if (!text || running) return;
  send(runBody(text, pipelineByUser && ui.pipeline.checked), `“${text.length > 40 ? `${text.slice(0, 39)}…` : text}”`);
  ui.message.value = "";
}
ui.sendMessage.addEventListener("click", sendMessage);
// Enter in the message sends it, not the form (which would run the fixture).
ui.message.addEventListener("keydown", (event) => {
  if (event.key !== "Enter") return;
  event.preventDefault();
  sendMessage();
});

ui.rawFill.addEventListener("click", () => {
  ui.rawInput.value = JSON.stringify(runBody(ui.message.value.trim() || ui.fixture.value || "hello", ui.pipeline.checked), null, 2);
  ui.rawErrors.replaceChildren();
});
ui.rawSend.addEventListener("click", () => {
  if (running) return;
  const { input, errors } = checkRunInput(ui.rawInput.value);
  ui.rawErrors.replaceChildren(...errors.map((error) => h("li", {}, error)));
  if (!input) return say(`The RunAgentInput was not sent: ${errors.length} problem${errors.length > 1 ? "s" : ""}.`, "error");
  // The run's thread becomes the page's, so an interrupt it ends with is answered where it was asked.
  thread = useThread({
    id: input.threadId,
    rosInvocationId: input.forwardedProps?.iacCode?.rosInvocationId ?? thread.rosInvocationId,
    forwardedProps: input.forwardedProps,
  });
  void stream(input, "RunAgentInput");
});

ui.attach.addEventListener("click", () => {
  const threadId = ui.attachThread.value.trim();
  const executionId = ui.attachExecution.value.trim();
  if (!threadId || !executionId) return say("Attach needs a threadId and an executionId (a run's session event fills both in).", "error");
  if (watching) return say("An attached view is streaming: stop it before attaching another.", "error");
  void stream({ threadId }, `attached · ${executionId}`, { path: subscribePath(executionId), watch: true });
});

/** Watches a thread by its id alone, through the connect route: what the threads panel's Attach does. @param {string} threadId */
function attachThread(threadId) {
  if (watching) return say("An attached view is streaming: stop it before attaching another.", "error");
  void stream({ threadId }, `attached · thread ${threadId}`, { path: connectPath(threadId), watch: true });
}

ui.stop.addEventListener("click", () => {
  running?.abort();
  watching?.abort();
});
// A new thread for the next runs; the runs on the page stay (to compare, save, look back at), each under its own thread.
ui.newThread.addEventListener("click", () => {
  thread = useThread(newThread());
  persist();
  say(`New thread ${thread.id}: the next run starts a new conversation; the runs above stay on the page.`);
});
// The only way runs leave the page: on purpose, all of them, and from what a reload brings back too.
ui.clearRuns.addEventListener("click", () => {
  running?.abort();
  watching?.abort();
  timeline.clear();
  forgetRuns();
  runs.clear();
  ui.timeline.append(h("p", { class: "empty" }, "No runs on the page. Pick a fixture and press Run, or type a message."));
  $("#state-panel", HTMLElement).hidden = true;
  persist();
  say(`Cleared the page's runs; the thread is still ${thread.id}.`);
});
ui.fixture.addEventListener("change", describeFixture);
const refresh = () => loadService().catch((error) => say(`Could not reach the service: ${error}`));
ui.token.addEventListener("change", () => {
  token = ui.token.value.trim();
  void refresh();
});

threadsPanel({
  panel: ui.threadsPanel,
  list: ui.threadsList,
  refresh: ui.threadsRefresh,
  headers: authorization,
  attach: attachThread,
  say,
});

// Which run the user looks at: a click or focus inside a run section, seen before the timeline's own handlers select
// an event there (capture), so the inspector knows whose event it shows.
ui.timeline.addEventListener("click", (event) => (runs.lookingAt = runs.runAt(event.target) ?? runs.lookingAt), { capture: true });
ui.timeline.addEventListener("focusin", (event) => (runs.lookingAt = runs.runAt(event.target) ?? runs.lookingAt), { capture: true });
// After them: a click in another run that selected nothing there still moves the inspector and state panel to it.
ui.timeline.addEventListener("click", (event) => {
  const run = runs.runAt(event.target);
  if (run) runs.lookAt(run);
});

restoreRuns();
void refresh();

// Keep (docs/sandbox.md): save a run, open a saved run or an A2A fixture, compare two runs.
keepControls({
  open: $("#open-file", HTMLInputElement),
  compareA: $("#compare-a", HTMLSelectElement),
  compareB: $("#compare-b", HTMLSelectElement),
  compare: $("#compare", HTMLButtonElement),
  timeline,
  newModel: (title) => new RunModel({ runId: "(from a file)", title, resume: false }),
  headers: authorization,
  say,
  // The same sections the timeline made: run-files.js only knows them by a narrower type.
  adopt: (view) => runs.lookAt(runs.adopt(/** @type {View} */ (/** @type {unknown} */ (view)))),
  settled: persist,
});
