/**
 * The specific messages (issue 13, "Language"): each situation that has a
 * message of its own produces it through the real service, in the request's
 * language, and with the detail, if any, in that language too. The message
 * is the reference adapter's sentence for the situation (issue 21); what we
 * say beyond it is the separate `detail`. The languages rotate over the
 * tests so each catalogue is read on the wire.
 */
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { EventType, type AGUIEvent } from "@ag-ui/core";
import { AguiError } from "../../lib/errors.js";
import { messageFor } from "../../lib/i18n/index.js";
import { answerMessage } from "../../lib/interrupts/answer-message.js";
import { startService, type RunningService } from "../../lib/server.js";
import { FileThreadStore } from "../../lib/state/file-thread-store.js";
import type { ThreadState } from "../../lib/state/thread-state.js";
import { LOCALES_DIR } from "../../lib/paths.js";
import { expectValidRun } from "../support/agui.js";
import { startHostileKernel, type HostileKernel, type StreamContext } from "../support/hostile-kernel.js";
import { interruptScript, permissionProjection } from "../support/interrupt-scripts.js";
import { CONTEXT, TASK, pendingOf, question } from "./interrupts/projections.js";
import { postRun, runInput, startHarness, testConfig, uniqueId, type Harness } from "../support/service.js";

const catalogs: Record<string, Record<string, string>> = Object.fromEntries(
  readdirSync(LOCALES_DIR)
    .filter((file) => file.endsWith(".json"))
    .map((file) => [path.basename(file, ".json"), JSON.parse(readFileSync(path.join(LOCALES_DIR, file), "utf8"))]),
);
const say = (language: string, key: string) => {
  const text = catalogs[language]![key];
  if (!text) throw new Error(`no ${key} in ${language}`);
  return text;
};

/**
 * What a client is told for `<code>.<reason>`: the reason's message, else the
 * code's, and the reason's own note as the detail, the located detail (if
 * any) attached to it.
 */
const told = (language: string, key: string, located?: string) => {
  const code = key.split(".")[0]!;
  const message = catalogs[language]![key] ?? say(language, code);
  const note = catalogs[language]![`${key}.detail`];
  const detail =
    note !== undefined && located !== undefined
      ? say(language, "detail.attached").replace("{message}", note).replace("{detail}", located)
      : (note ?? located);
  return detail === undefined ? { message } : { message, detail };
};
type Told = ReturnType<typeof told>;

type Input = ReturnType<typeof runInput>;
const allow = { interruptId: "perm-1", status: "resolved", payload: { decision: "allow_once" } };
const deny = { interruptId: "perm-1", status: "resolved", payload: { decision: "deny" } };
const next = (first: Input, overrides: Record<string, unknown> = {}) => ({ ...first, runId: uniqueId("run"), ...overrides });
const resume = (first: Input, entries: unknown[]) => next(first, { resume: entries });
const withIacCode = (input: Input, change: Record<string, unknown>) => ({
  ...input,
  forwardedProps: { iacCode: { ...input.forwardedProps.iacCode, ...change } },
});
const inLanguage = (language: string) => ({ "accept-language": `${language};q=0.9, en;q=0.1` });

/** The run's last event is a RUN_ERROR with this code, exactly this message and exactly this detail (or none). */
async function expectRunError(events: AGUIEvent[], code: string, { message, detail }: Told): Promise<void> {
  await expectValidRun(events);
  const last = events.at(-1) as AGUIEvent & { metadata?: Record<string, unknown> };
  expect(last).toMatchObject({ type: EventType.RUN_ERROR, code, message });
  expect(last.metadata).toEqual(detail === undefined ? undefined : { "iac-code": { detail } });
}

function expectHttpError(result: { status: number; json: unknown }, status: number, code: string, text: Told): void {
  expect(result.status).toBe(status);
  expect(result.json).toEqual({ error: { code, ...text } });
}

/** A permission interrupt with these fields changed, on its own user text. */
const parkOn = (text: string, change: Record<string, unknown>) => interruptScript(text, { ...permissionProjection, ...change });

describe("specific messages of admission and resume, over HTTP with the replay kernel", () => {
  let harness: Harness;
  const scripts = [
    interruptScript("permission", permissionProjection),
    parkOn("foreign-task", { requestTaskId: "a-task-of-someone-else" }),
    parkOn("foreign-context", { contextId: "a-context-of-someone-else" }),
    interruptScript("bad-deployment", {
      schemaVersion: 1,
      kind: "deployment_confirmation",
      requestTaskId: "${taskId}",
      contextId: "${contextId}",
      inputId: "deploy-1",
      toolUseId: "toolu-deploy",
      toolName: "ros_deploy_stack",
      prompt: "Deploy now?",
      required: true,
      options: [],
    }),
  ];
  beforeAll(async () => {
    harness = await startHarness({ script: (turn) => scripts.map((script) => script(turn)).find(Boolean) }, { interruptTtlS: 600 });
  });
  afterAll(() => harness.close());
  const post = (body: unknown, language = "en") => postRun(harness.service.url, body, inLanguage(language));

  async function interrupted(language = "en"): Promise<Input> {
    const first = runInput("permission");
    const { events } = await post(first, language);
    await expectValidRun(events);
    expect(events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "interrupt" } });
    return first;
  }

  it("THREAD_BINDING_CONFLICT.workspace: the thread is bound to another cwd", async () => {
    const first = runInput("chat");
    await post(first);
    const elsewhere = withIacCode(next(first), { cwd: mkdtempSync(path.join(first.forwardedProps.iacCode.cwd, "elsewhere-")) });
    expectHttpError(await post(elsewhere, "ja"), 409, "THREAD_BINDING_CONFLICT", told("ja", "THREAD_BINDING_CONFLICT.workspace"));
  });

  it("THREAD_BINDING_CONFLICT.caller: the thread belongs to another userId", async () => {
    const first = runInput("chat", {}, { userId: "alice" });
    await post(first);
    const mallory = withIacCode(next(first), { userId: "mallory" });
    expectHttpError(await post(mallory, "de"), 409, "THREAD_BINDING_CONFLICT", told("de", "THREAD_BINDING_CONFLICT.caller"));
  });

  it("INVALID_INPUT.notObject and cancelNotObject: a body that is JSON but no object, as the reference words it", async () => {
    const detail = say("pt", "detail.located").replace("{at}", "/").replace("{what}", say("pt", "detail.type").replace("{type}", "object"));
    expectHttpError(await post(["not", "an", "object"], "pt"), 400, "INVALID_INPUT", told("pt", "INVALID_INPUT.notObject", detail));
    expect((await post([], "en")).json).toMatchObject({ error: { message: "RunAgentInput must be a JSON object." } });
    const cancel = (body: unknown) =>
      fetch(`${harness.service.url}/extensions/iac-code/v1/executions/e1/cancel`, {
        method: "POST",
        headers: { "content-type": "application/json", "accept-language": "en" },
        body: JSON.stringify(body),
      }).then(async (response) => ({ status: response.status, json: await response.json() }));
    expect(await cancel([1])).toEqual({
      status: 400,
      json: { error: { code: "INVALID_INPUT", message: "The cancel request must be a JSON object." } },
    });
    expect(await cancel({ threadId: "t" })).toEqual({
      status: 400,
      json: { error: { code: "INVALID_INPUT", message: "threadId and rosInvocationId are required." } },
    });
  });

  it("EXECUTION_LOST.unknownThread: a resume on a thread that never ran", async () => {
    const unknown = runInput("x", { resume: [allow] });
    expectHttpError(await post(unknown, "fr"), 409, "EXECUTION_LOST", told("fr", "EXECUTION_LOST.unknownThread"));
  });

  it("EXECUTION_LOST.invocationMismatch: a resume under another rosInvocationId than the interrupted run's", async () => {
    const first = await interrupted();
    const other = withIacCode(resume(first, [allow]), { rosInvocationId: "ros-other" });
    expectHttpError(await post(other, "es"), 409, "EXECUTION_LOST", told("es", "EXECUTION_LOST.invocationMismatch"));
  });

  it("EXECUTION_LOST.nothingPending: a resume on a thread whose run finished without an interrupt", async () => {
    const first = runInput("chat");
    await expectValidRun((await post(first)).events);
    const { events } = await post(resume(first, [allow]), "zh");
    await expectRunError(events, "EXECUTION_LOST", told("zh", "EXECUTION_LOST.nothingPending"));
  });

  it("RESUME_ALREADY_APPLIED.differentAnswer: an accepted interrupt answered again, differently", async () => {
    const first = await interrupted();
    const accepted = await post(resume(first, [allow]));
    expect(accepted.events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });
    const changed = await post(resume(first, [deny]), "pt");
    await expectRunError(changed.events, "RESUME_ALREADY_APPLIED", told("pt", "RESUME_ALREADY_APPLIED.differentAnswer"));
    // The same answer again is told the general message.
    const same = await post(resume(first, [allow]), "pt");
    await expectRunError(same.events, "RESUME_ALREADY_APPLIED", told("pt", "RESUME_ALREADY_APPLIED"));
  });

  it.each([
    ["foreign-task", "A2A_PROTOCOL_ERROR.interruptTask", "ja"],
    ["foreign-context", "A2A_PROTOCOL_ERROR.interruptContext", "fr"],
  ])("%s: an interrupt of another task or context is %s", async (text, key, language) => {
    const { events } = await post(runInput(text), language);
    await expectRunError(events, "A2A_PROTOCOL_ERROR", told(language, key));
  });

  it("A2A_PROTOCOL_ERROR.deploymentOptions: a deployment confirmation without options, its detail in the same language", async () => {
    const { events } = await post(runInput("bad-deployment"), "de");
    const detail = say("de", "detail.located")
      .replace("{at}", "deployment_confirmation options")
      .replace("{what}", say("de", "detail.nonEmptyList"));
    await expectRunError(events, "A2A_PROTOCOL_ERROR", told("de", "A2A_PROTOCOL_ERROR.deploymentOptions", detail));
  });

  const image = (source: Record<string, unknown>) =>
    runInput("x", { messages: [{ id: uniqueId("m"), role: "user", content: [{ type: "image", source }] }] });
  it.each([
    ["remoteMedia", { type: "url", value: "https://example.com/a.png", mimeType: "image/png" }, "/source/type", "const", "zh"],
    ["imageMediaType", { type: "data", value: "AAAA", mimeType: "image/svg+xml" }, "/source/mimeType", "pattern", "es"],
    ["imageData", { type: "data", value: "not base64!", mimeType: "image/png" }, "/source/value", "pattern", "pt"],
    ["imageData", { type: "data", value: "AAA", mimeType: "image/png" }, "/source/value", "unpaddedBase64", "ja"],
  ])("INVALID_INPUT.%s, with its detail in the same language", async (reason, source, at, phrase, language) => {
    const result = await post(image(source), language);
    const detail = say(language, "detail.located")
      .replace("{at}", `/messages/0/content/0${at}`)
      .replace("{what}", say(language, `detail.${phrase}`));
    expectHttpError(result, 400, "INVALID_INPUT", told(language, `INVALID_INPUT.${reason}`, detail));
    expect(JSON.stringify(result.json)).not.toContain("example.com");
  });

  it("INVALID_INPUT.forwardedProps: the cwd's problem is said in the request's language, as the reference words it", async () => {
    const outside = withIacCode(runInput("x"), { cwd: "/definitely/not/allowed" });
    const result = await post(outside, "zh");
    const detail = say("zh", "detail.located")
      .replace("{at}", "/forwardedProps/iacCode/cwd")
      .replace("{what}", say("zh", "detail.outsideRoots"));
    expectHttpError(result, 400, "INVALID_INPUT", told("zh", "INVALID_INPUT.forwardedProps.outsideRoots", detail));
    expect(result.json).toMatchObject({ error: { message: "iac-code 工作区位于允许的根目录之外。" } });
  });

  it("RESUME_PAYLOAD_INVALID: the schema's complaint is said in the request's language", async () => {
    const first = await interrupted();
    const { events } = await post(resume(first, [{ ...allow, payload: { decision: "allow_always" } }]), "fr");
    const detail = say("fr", "detail.located").replace("{at}", "/decision").replace("{what}", say("fr", "detail.enum"));
    await expectRunError(events, "RESUME_PAYLOAD_INVALID", told("fr", "RESUME_PAYLOAD_INVALID", detail));
  });
});

describe("specific messages of state that cannot be written", () => {
  let harness: Harness;
  /** Fails the write a thread's id asks for: its task, its session, its interrupts, or an accepted answer. */
  const failing = (files: FileThreadStore) => {
    const saved = new Map<string, ThreadState>();
    const fails = (state: ThreadState, before: ThreadState | undefined) => {
      const { threadId } = state;
      if (threadId.startsWith("fail-task")) return state.execution.taskId !== null && before?.execution.taskId !== state.execution.taskId;
      if (threadId.startsWith("fail-session"))
        return state.iacCodeSessionId !== null && before?.iacCodeSessionId !== state.iacCodeSessionId;
      if (threadId.startsWith("fail-pause")) return Object.keys(state.execution.pending).length > 0;
      if (threadId.startsWith("fail-accept")) return state.appliedResumeDigests.length > (before?.appliedResumeDigests.length ?? 0);
      return false;
    };
    return {
      load: (threadId: string) => files.load(threadId),
      tryAcquire: (threadId: string) => files.tryAcquire(threadId),
      save: async (state: ThreadState) => {
        if (fails(state, saved.get(state.threadId))) throw new Error("disk full");
        await files.save(state);
        saved.set(state.threadId, state);
      },
    };
  };
  beforeAll(async () => {
    const config = testConfig();
    harness = await startHarness(
      { script: interruptScript("permission", permissionProjection) },
      { stateDir: config.stateDir },
      { store: failing(new FileThreadStore({ stateDir: config.stateDir })) },
    );
  });
  afterAll(() => harness.close());
  const post = (body: unknown, language: string) => postRun(harness.service.url, body, inLanguage(language));

  it.each([
    ["fail-task", "taskMapping", "es"],
    ["fail-session", "sessionMapping", "de"],
    ["fail-pause", "interrupts", "ja"],
  ])("%s: STATE_PERSISTENCE_FAILED.%s", async (prefix, reason, language) => {
    const { events } = await post(runInput("permission", { threadId: uniqueId(prefix) }), language);
    await expectRunError(events, "STATE_PERSISTENCE_FAILED", told(language, `STATE_PERSISTENCE_FAILED.${reason}`));
  });

  it("fail-accept: STATE_PERSISTENCE_FAILED.acceptedAnswer", async () => {
    const first = runInput("permission", { threadId: uniqueId("fail-accept") });
    const paused = await post(first, "en");
    expect(paused.events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "interrupt" } });
    const { events } = await post(resume(first, [allow]), "zh");
    await expectRunError(events, "STATE_PERSISTENCE_FAILED", told("zh", "STATE_PERSISTENCE_FAILED.acceptedAnswer"));
  });
});

describe("specific messages of a parked task the kernel no longer holds as it was", () => {
  let kernel: HostileKernel;
  let service: RunningService;
  /** Each parked task: the user text that parked it (so GetTask and the answer know which test they serve), and its context. */
  const parked = new Map<string, { text: string; contextId: string }>();
  const park = (text: string) => (context: StreamContext) => {
    const { taskId, contextId, record } = context;
    parked.set(taskId, { text, contextId });
    const input = { ...permissionProjection, requestTaskId: taskId, contextId };
    context.startSse();
    context.res.end(
      context.opening() +
        record({ statusUpdate: { taskId, contextId, status: { state: "TASK_STATE_INPUT_REQUIRED" }, metadata: { iac_code: { input } } } }),
    );
  };
  beforeAll(async () => {
    kernel = await startHostileKernel();
    for (const text of ["gone", "ended", "moved", "silent", "rejected"]) kernel.script(text, park(text));
    kernel.answer("GetTask", (request, res) => {
      const id = String(request.params.id);
      const json = (body: unknown) => {
        res.writeHead(200, { "Content-Type": "application/json" });
        res.end(JSON.stringify({ jsonrpc: "2.0", id: request.id, ...(body as object) }));
      };
      const contextId = parked.get(id)?.contextId ?? "";
      const task = (state: string, context = contextId) => ({ result: { id, contextId: context, status: { state } } });
      switch (parked.get(id)?.text) {
        case "gone":
          return json({ error: { code: -32001, message: "Task not found" } });
        case "ended":
          return json(task("TASK_STATE_COMPLETED"));
        case "moved":
          return json(task("TASK_STATE_INPUT_REQUIRED", "a-context-of-someone-else"));
        case "silent":
        case "rejected":
          return json(task("TASK_STATE_INPUT_REQUIRED"));
        default:
          return false;
      }
    });
    // The answer to the silent task's interrupt: a stream that ends before saying anything.
    kernel.answer("SendStreamingMessage", (request, res) => {
      const message = request.params.message as { taskId?: string } | undefined;
      const text = message?.taskId === undefined ? undefined : parked.get(message.taskId)?.text;
      if (text === "rejected") {
        // The answer refused with a JSON-RPC error before anything was accepted.
        res.writeHead(200, { "Content-Type": "application/json" });
        res.end(JSON.stringify({ jsonrpc: "2.0", id: request.id, error: { code: -32602, message: "invalid permission response" } }));
        return;
      }
      if (text !== "silent") return false;
      res.writeHead(200, { "Content-Type": "text/event-stream" });
      res.end();
    });
    service = await startService(testConfig({ a2aUrl: kernel.url }));
  });
  afterAll(async () => {
    await service.close();
    await kernel.close();
  });
  const post = (body: unknown, language: string) => postRun(service.url, body, inLanguage(language));

  it.each([
    ["gone", "EXECUTION_LOST", "EXECUTION_LOST.taskNotFound", "de", undefined],
    ["ended", "EXECUTION_LOST", "EXECUTION_LOST.taskEnded", "es", undefined],
    ["moved", "A2A_PROTOCOL_ERROR", "A2A_PROTOCOL_ERROR.taskMismatch", "pt", undefined],
    ["silent", "A2A_UNAVAILABLE", "A2A_UNAVAILABLE.answerNotAccepted", "zh", undefined],
    // A JSON-RPC error on an answer not accepted is the kernel refusing it, not the execution failing; its message is in the detail.
    ["rejected", "A2A_UNAVAILABLE", "A2A_UNAVAILABLE.answerRejected", "fr", "invalid permission response"],
  ])("a resume of a task that is %s: %s", async (text, code, key, language, detail) => {
    const first = runInput(text);
    const paused = await post(first, "en");
    await expectValidRun(paused.events);
    expect(paused.events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "interrupt" } });
    const { events } = await post(resume(first, [allow]), language);
    await expectRunError(events, code, told(language, key, detail));
  });

  it.each(["gone", "rejected", "silent"])(
    "a resume of a task that is %s keeps the interrupt answerable: a new message is told RESUME_REQUIRED, naming it",
    async (text) => {
      const first = runInput(text);
      await post(first, "en");
      await post(resume(first, [allow]), "en");
      const { status, json } = await post(next(first, { messages: [{ id: uniqueId("m"), role: "user", content: "hello?" }] }), "en");
      expect(status).toBe(409);
      expect(json).toMatchObject({ error: { code: "RESUME_REQUIRED", interrupts: [expect.objectContaining({ id: "perm-1" })] } });
    },
  );
});

describe("RESUME_PAYLOAD_INVALID.noAnswer", () => {
  // The response schemas let no answer-less payload through, so no request reaches this: it guards the builder itself.
  it("is what an answer without a choice or text is told, in the request's language", () => {
    let error: unknown;
    try {
      answerMessage(
        pendingOf(question),
        { interruptId: "q-1", status: "resolved", payload: {} },
        { taskId: TASK, contextId: CONTEXT, runId: "r" },
      );
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(AguiError);
    expect((error as AguiError).params).toEqual({ reason: "noAnswer" });
    for (const language of Object.keys(catalogs)) {
      expect(messageFor(error as AguiError, language)).toBe(say(language, "RESUME_PAYLOAD_INVALID.noAnswer"));
    }
  });
});

describe("the language of a request that names none", () => {
  let harness: Harness;
  const saved = { LC_ALL: process.env.LC_ALL, LC_MESSAGES: process.env.LC_MESSAGES, LANG: process.env.LANG };
  beforeAll(async () => {
    harness = await startHarness();
    // The service's process runs in a German locale.
    process.env.LC_ALL = "de_DE.UTF-8";
  });
  afterAll(async () => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    await harness.close();
  });

  it("is the process's locale, as the reference adapter falls back to it; a request's own language still wins", async () => {
    // fetch sends `Accept-Language: *` unless told otherwise: any language, which names none.
    const unnamed = await postRun(harness.service.url, "{not json");
    expect(unnamed.status).toBe(400);
    expect(unnamed.json).toMatchObject({ error: { code: "INVALID_JSON", message: say("de", "INVALID_JSON") } });
    const named = await postRun(harness.service.url, "{not json", inLanguage("ja"));
    expect(named.json).toMatchObject({ error: { code: "INVALID_JSON", message: say("ja", "INVALID_JSON") } });
  });
});
