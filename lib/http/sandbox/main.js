// @ts-check
/**
 * The sandbox page: runs a fixture against this service, feeds the streamed
 * AG-UI events to the timeline, and answers interrupts with a resume on the
 * same thread. The bearer token stays in this module's memory: never in
 * storage, cookies or the URL.
 */
import { $, h, randomId } from "./dom.js";
import { interruptForm } from "./interrupt-form.js";
import { forgetRuns, keepControls, keepRun } from "./run-files.js";
import { RunModel } from "./run-model.js";
import { sseRecords } from "./sse.js";
import { Timeline } from "./timeline.js";

/** @typedef {{ name: string, description: string, pipeline: boolean }} Fixture */
/**
 * What a resume must repeat: the same thread, `rosInvocationId` and `cwd` as the run it answers.
 * @typedef {{ id: string, rosInvocationId: string, forwardedProps: Record<string, any> | undefined }} Thread
 */

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
  token: $("#token", HTMLInputElement),
  cwd: $("#cwd", HTMLInputElement),
  language: $("#language", HTMLSelectElement),
  thread: $("#thread-id", HTMLElement),
  service: $("#service", HTMLElement),
  status: $("#status", HTMLElement),
  timeline: $("#timeline", HTMLElement),
  inspectorTitle: $("#inspector-title", HTMLElement),
  inspectorBody: $("#inspector-body", HTMLElement),
};

let token = "";
/** @type {AbortController | undefined} */
let running;
/** @type {Map<string, Fixture>} */
const fixtures = new Map();
let thread = freshThread();

const timeline = new Timeline(ui.timeline, (title, value) => {
  ui.inspectorTitle.textContent = title;
  ui.inspectorBody.textContent = typeof value === "string" ? value : JSON.stringify(value, null, 2);
});

/** @returns {Thread} */
function freshThread() {
  /** @type {Thread} */
  const next = { id: randomId("sandbox-thread"), rosInvocationId: randomId("sandbox-ros"), forwardedProps: undefined };
  ui.thread.textContent = next.id;
  return next;
}

/** @param {string} message */
function say(message) {
  ui.status.textContent = message;
}

/** @returns {Record<string, string>} */
function authorization() {
  return token ? { authorization: `Bearer ${token}` } : {};
}

/** @param {boolean} busy */
function setBusy(busy) {
  ui.run.disabled = busy;
  ui.newThread.disabled = busy;
  ui.stop.disabled = !busy;
  ui.timeline.setAttribute("aria-busy", String(busy));
}

async function loadService() {
  const [health, list] = await Promise.all([
    fetch("/health", { headers: authorization() }),
    fetch("/sandbox/fixtures", { headers: authorization() }),
  ]);
  if (health.status === 401 || list.status === 401) {
    ui.service.textContent = "needs a bearer token";
    say("This service wants a bearer token: paste it into the token field.");
    return;
  }
  if (health.ok) {
    const info = await health.json();
    ui.service.textContent = `iac-code-agui ${info.version} · AG-UI ${info.protocolVersion} · ${info.executionKernel}`;
  }
  if (!list.ok) return say(`Could not list the fixtures: HTTP ${list.status}.`);
  /** @type {{ fixtures: Fixture[], defaults?: { cwd?: string } }} */
  const body = await list.json();
  const previous = ui.fixture.value;
  fixtures.clear();
  for (const fixture of body.fixtures) fixtures.set(fixture.name, fixture);
  ui.fixture.replaceChildren(...body.fixtures.map((fixture) => h("option", { value: fixture.name }, fixture.name)));
  if (fixtures.has(previous)) ui.fixture.value = previous;
  if (!ui.cwd.value && body.defaults?.cwd) ui.cwd.value = body.defaults.cwd;
  describeFixture();
  ui.run.disabled = running !== undefined;
  say(`${fixtures.size} fixtures. Pick one and press Run.`);
}

function describeFixture() {
  const fixture = fixtures.get(ui.fixture.value);
  ui.description.textContent = fixture?.description ?? "";
  ui.pipeline.checked = fixture?.pipeline ?? false;
}

/**
 * POSTs one RunAgentInput and streams its answer into a new run section.
 * @param {Record<string, any>} body
 * @param {string} title
 */
async function stream(body, title) {
  const model = new RunModel({ runId: body.runId, title, resume: body.resume !== undefined });
  const view = timeline.addRun(model);
  const kept = keepRun(view);
  const controller = new AbortController();
  running = controller;
  setBusy(true);
  say(`Run ${view.number} (${title}) is streaming.`);
  const started = performance.now();
  try {
    const response = await fetch("/", {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream", ...authorization() },
      body: JSON.stringify(body),
      signal: controller.signal,
    });
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
      try {
        view.addEvent(model.add(JSON.parse(record.data), performance.now() - started));
      } catch {
        model.detail = `An SSE record that is not JSON: ${record.data.slice(0, 200)}`;
      }
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
    running = undefined;
    model.elapsedMs = performance.now() - started;
    setBusy(false);
    view.update();
    view.renderChart();
    say(`Run ${view.number} (${title}): ${model.status === "interrupt" ? "waiting for an answer" : model.status}.`);
    if (model.status === "interrupt") offerAnswers(model, view);
  }
  return model;
}

/** @param {string} text */
function errorText(text) {
  try {
    const { error } = JSON.parse(text);
    return `${error.code}: ${error.message}`;
  } catch {
    return text.slice(0, 300);
  }
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
    return true;
  });
  view.attach(form.element);
  form.focus();
}

ui.form.addEventListener("submit", (event) => {
  event.preventDefault();
  const name = ui.fixture.value;
  if (!name || running) return;
  const iacCode = {
    schemaVersion: 1,
    rosInvocationId: thread.rosInvocationId,
    cwd: ui.cwd.value,
    ...(ui.pipeline.checked ? { runMode: "pipeline" } : {}),
    ...(ui.language.value ? { preferredLanguage: ui.language.value } : {}),
  };
  thread.forwardedProps = { iacCode };
  const body = {
    threadId: thread.id,
    runId: randomId("sandbox-run"),
    state: {},
    messages: [{ id: randomId("sandbox-msg"), role: "user", content: name }],
    tools: [],
    context: [],
    forwardedProps: thread.forwardedProps,
  };
  void stream(body, `${name}${ui.pipeline.checked ? " · pipeline" : ""}`);
});

ui.stop.addEventListener("click", () => running?.abort());
ui.newThread.addEventListener("click", () => {
  thread = freshThread();
  timeline.clear();
  forgetRuns();
  ui.timeline.append(h("p", { class: "empty" }, "A new thread: nothing has run on it yet."));
  ui.inspectorTitle.textContent = "Nothing selected";
  ui.inspectorBody.textContent = "";
  say(`New thread ${thread.id}.`);
});
ui.fixture.addEventListener("change", describeFixture);
const refresh = () => loadService().catch((error) => say(`Could not reach the service: ${error}`));
ui.token.addEventListener("change", () => {
  token = ui.token.value.trim();
  void refresh();
});

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
});
