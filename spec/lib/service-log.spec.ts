/**
 * The service's log, read as an operator's log shipper reads it: the real
 * service in front of real kernels, its logger made as `main.ts` makes it
 * but writing into memory. Each record is one JSON line with its time and
 * level; a run's records carry its thread and run ids; a client that leaves
 * is told at debug; every RUN_ERROR and every refused state file is logged
 * once, with its code; and no credential or user text ever reaches a line.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { afterAll, beforeAll, beforeEach, describe, expect, it, jest } from "@jest/globals";
import { EventType } from "@ag-ui/core";
import { startReplayKernel, type ReplayKernel } from "../../lib/kernel/replay-kernel.js";
import { startService, type RunningService } from "../../lib/server.js";
import { MAX_JSON_FILE_BYTES } from "../../lib/state/atomic-json-adapter.js";
import { FileThreadStore } from "../../lib/state/file-thread-store.js";
import { expectValidRun } from "../support/agui.js";
import { startHostileKernel, type HostileKernel } from "../support/hostile-kernel.js";
import { captureLogs, type CapturedLogs, type LogRecord } from "../support/logs.js";
import { postRun, runInput, testConfig, uniqueId, waitFor } from "../support/service.js";

const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** Credentials and user text a request carries; none may appear in any log line. */
const CLIENT_TOKEN = "client-token-7f3a9c";
const KERNEL_TOKEN = "kernel-token-51d2e8";
const CREDENTIALS = {
  llmApiKey: "sk-live-log-4242",
  alibabaCloud: {
    accessKeyId: "LTAI-log-id",
    accessKeySecret: "ak-secret-log-9191",
    securityToken: "sts-token-log-8080",
    regionId: "cn-hangzhou",
  },
};
const SECRET_STRINGS = [CLIENT_TOKEN, KERNEL_TOKEN, CREDENTIALS.llmApiKey, "ak-secret-log-9191", "sts-token-log-8080"];
/** Words of the user's messages, and of the kernel's failure texts (which may quote them). */
const USER_WORDS = "Zephyr-hush-project";
const KERNEL_TEXTS = ["quota exceeded", "model connection was reset", USER_WORDS];

const auth = { authorization: `Bearer ${CLIENT_TOKEN}` };

function expectOneJsonLinePerRecord(logs: CapturedLogs): LogRecord[] {
  const records = logs.records();
  for (const record of records) {
    expect(record.time).toMatch(ISO_TIME);
    expect(["fatal", "error", "warn", "info", "debug", "trace"]).toContain(record.level);
    expect(typeof record.msg).toBe("string");
  }
  return records;
}

describe("the service's log", () => {
  let replay: ReplayKernel;
  let hostile: HostileKernel;
  let service: RunningService;
  let logs: CapturedLogs;
  let stateDir: string;

  beforeAll(async () => {
    replay = await startReplayKernel({ timeScale: 0, requireToken: KERNEL_TOKEN });
    hostile = await startHostileKernel();
    // A protocol error whose frame quotes the user: the JSON parser's message would repeat it.
    hostile.script(`${USER_WORDS} broken`, ({ res, startSse, opening }) => {
      startSse();
      res.end(`${opening()}data: {"jsonrpc":"2.0","result": ${USER_WORDS} is not JSON\n\n`);
    });
    // A run that streams and then waits: only its client leaving (and the cancel that follows) ends it.
    hostile.script(`${USER_WORDS} hold`, ({ res, startSse, opening, record, taskId, contextId }) => {
      startSse();
      const text = { messageId: `${taskId}-m`, role: "ROLE_AGENT", parts: [{ text: "working" }] };
      res.write(opening() + record({ statusUpdate: { taskId, contextId, status: { state: "TASK_STATE_WORKING", message: text } } }));
    });
    const config = testConfig({ a2aUrl: replay.url, a2aToken: KERNEL_TOKEN, authToken: CLIENT_TOKEN });
    stateDir = config.stateDir;
    logs = captureLogs("trace");
    service = await startService(config, { log: logs.logger });
  });
  afterAll(async () => {
    await service.close();
    await replay.close();
    await hostile.close();
  });

  const post = (text: string, overrides: Record<string, unknown> = {}) =>
    postRun(service.url, runInput(text, overrides, CREDENTIALS), auth);
  const ofRun = (runId: string) => logs.records().filter((record) => record.runId === runId);

  it("logs a run's RUN_ERROR once, at warn, with its code, the run's ids and the error behind it", async () => {
    const input = runInput(`failing-run`, {}, CREDENTIALS);
    const { events } = await postRun(service.url, input, auth);
    await expectValidRun(events);
    expect(events.at(-1)).toMatchObject({ type: EventType.RUN_ERROR, code: "A2A_EXECUTION_FAILED" });

    const runErrors = ofRun(input.runId).filter((record) => record.code === "A2A_EXECUTION_FAILED");
    expect(runErrors).toHaveLength(1);
    expect(runErrors[0]).toMatchObject({
      level: "warn",
      threadId: input.threadId,
      runId: input.runId,
      executionId: expect.any(String),
      taskId: expect.any(String),
      err: { type: "AguiError", code: "A2A_EXECUTION_FAILED", params: { state: "failed" } },
    });
    expect(runErrors[0]!.time).toMatch(ISO_TIME);
  });

  it("logs a kernel's JSON-RPC error once, by its codes, without the kernel's message", async () => {
    const quiet = jest.spyOn(console, "error").mockImplementation(() => {}); // the SDK kernel logs the error it sends
    const input = runInput("stream-error", {}, CREDENTIALS);
    const { events } = await postRun(service.url, input, auth).finally(() => quiet.mockRestore());
    expect(events.at(-1)).toMatchObject({ type: EventType.RUN_ERROR, code: "A2A_EXECUTION_FAILED" });
    const runErrors = ofRun(input.runId).filter((record) => record.code === "A2A_EXECUTION_FAILED");
    expect(runErrors).toEqual([
      expect.objectContaining({
        level: "warn",
        err: expect.objectContaining({ params: { rpcCode: -32603 }, cause: expect.objectContaining({ code: -32603 }) }),
      }),
    ]);
    expect(JSON.stringify(runErrors)).not.toContain("model connection was reset");
  });

  describe("in front of a kernel that misbehaves", () => {
    let other: RunningService;
    let otherLogs: CapturedLogs;
    /** While set, CancelTask answers that the task has ended already (-32002), as a kernel does once its task settled. */
    let cancelFindsTaskEnded = false;
    beforeAll(async () => {
      hostile.answer("CancelTask", (request, res) => {
        if (!cancelFindsTaskEnded) return false;
        res.writeHead(200, { "Content-Type": "application/json" });
        res.end(JSON.stringify({ jsonrpc: "2.0", id: request.id, error: { code: -32002, message: "Task cannot be canceled" } }));
      });
      otherLogs = captureLogs("trace");
      other = await startService(testConfig({ a2aUrl: hostile.url, authToken: CLIENT_TOKEN }), { log: otherLogs.logger });
    });
    afterAll(() => other.close());

    it("logs a protocol error once, with its cause's type and stack but not the text the parser quotes", async () => {
      const input = runInput(`${USER_WORDS} broken`, {}, CREDENTIALS);
      const { events } = await postRun(other.url, input, auth);
      await expectValidRun(events);
      expect(events.at(-1)).toMatchObject({ type: EventType.RUN_ERROR, code: "A2A_PROTOCOL_ERROR" });
      const records = otherLogs.records().filter((record) => record.runId === input.runId && record.code === "A2A_PROTOCOL_ERROR");
      expect(records).toEqual([
        expect.objectContaining({
          level: "warn",
          err: expect.objectContaining({
            type: "AguiError",
            cause: expect.objectContaining({ type: "SyntaxError", stack: expect.any(String) }),
          }),
        }),
      ]);
      expect(otherLogs.text()).not.toContain(USER_WORDS);
    });

    it.each([
      ["its task cancelled", false],
      ["its task found ended already", true],
    ])("logs a client that leaves mid-run at debug, and nothing about its run above debug (%s)", async (_name, taskEnded) => {
      cancelFindsTaskEnded = taskEnded;
      const cancels = hostile.calls("CancelTask").length;
      const input = runInput(`${USER_WORDS} hold`, {}, CREDENTIALS);
      const controller = new AbortController();
      const response = await fetch(other.url, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "text/event-stream", ...auth },
        body: JSON.stringify(input),
        signal: controller.signal,
      });
      const reader = response.body!.getReader();
      let seen = "";
      while (!seen.includes("TEXT_MESSAGE_CONTENT")) seen += new TextDecoder().decode((await reader.read()).value);
      controller.abort();
      await waitFor(() => hostile.calls("CancelTask").length > cancels);
      await waitFor(() => otherLogs.records().some((record) => record.runId === input.runId && /client closed/.test(record.msg)));
      if (taskEnded) await waitFor(() => otherLogs.records().some((record) => /had ended already/.test(record.msg)));
      // The thread's next message, once the run has let go of it: by its end the cancel's answer is long read.
      let next = await postRun(other.url, runInput("fine", { threadId: input.threadId }), auth);
      for (const deadline = Date.now() + 15_000; next.status === 409 && Date.now() < deadline;) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        next = await postRun(other.url, runInput("fine", { threadId: input.threadId }), auth);
      }
      expect(next.status).toBe(200);
      cancelFindsTaskEnded = false;

      const records = otherLogs.records().filter((record) => record.runId === input.runId);
      expect(records.filter((record) => record.level !== "debug")).toEqual([]);
      expect(records).toContainEqual(
        expect.objectContaining({
          level: "debug",
          method: "POST",
          path: "/",
          threadId: input.threadId,
          msg: expect.stringMatching(/client closed/),
        }),
      );
    });
  });

  describe("a kernel that is down", () => {
    let down: RunningService;
    let downLogs: CapturedLogs;
    beforeAll(async () => {
      downLogs = captureLogs("trace");
      // A port nothing listens on.
      down = await startService(testConfig({ a2aUrl: "http://127.0.0.1:9/" }), { log: downLogs.logger });
    });
    afterAll(() => down.close());

    it("logs the run's RUN_ERROR A2A_UNAVAILABLE once, with the connection's error code", async () => {
      const input = runInput(USER_WORDS, {}, CREDENTIALS);
      const { events } = await postRun(down.url, input);
      expect(events.at(-1)).toMatchObject({ type: EventType.RUN_ERROR, code: "A2A_UNAVAILABLE" });
      // The cancel by context that follows fails too, and says so: that is another call, with its own record.
      const records = downLogs.records().filter((record) => record.runId === input.runId && /RUN_ERROR/.test(record.msg));
      expect(records).toEqual([
        expect.objectContaining({ level: "warn", threadId: input.threadId, err: expect.objectContaining({ code: "A2A_UNAVAILABLE" }) }),
      ]);
      expect(JSON.stringify(records[0])).toContain("ECONNREFUSED");
      expect(downLogs.text()).not.toContain(USER_WORDS);
    });
  });

  describe("an observer whose kernel went away", () => {
    it("logs the observer's RUN_ERROR once, at warn, with its code and the observed execution's ids", async () => {
      const kernel = await startReplayKernel({ timeScale: 0 });
      const observerLogs = captureLogs("trace");
      const observed = await startService(testConfig({ a2aUrl: kernel.url }), { log: observerLogs.logger });
      try {
        const paused = runInput("permission", {}, CREDENTIALS);
        const { events } = await postRun(observed.url, paused);
        expect(events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "interrupt" } });
        const session = events.find((event) => event.type === EventType.CUSTOM && event.name === "iac-code.session.v1") as {
          value: { executionId: string };
        };
        const { executionId } = session.value;
        await kernel.close();

        const observer = await postRun(`${observed.url}/extensions/iac-code/v1/executions/${executionId}/subscribe`, {
          threadId: paused.threadId,
        });
        await expectValidRun(observer.events);
        const end = observer.events.at(-1) as { type: string; code: string };
        expect(end.type).toBe(EventType.RUN_ERROR);
        const records = observerLogs.records().filter((record) => /observer ended with RUN_ERROR/.test(record.msg));
        expect(records).toEqual([
          expect.objectContaining({
            level: "warn",
            code: end.code,
            threadId: paused.threadId,
            executionId,
            runId: expect.stringMatching(/^observe-/),
            err: expect.objectContaining({ code: end.code }),
          }),
        ]);
      } finally {
        await observed.close();
      }
    });
  });

  describe("a refused state file", () => {
    let threadId: string;
    let file: string;
    beforeEach(() => {
      threadId = uniqueId("thread");
      file = new FileThreadStore({ stateDir }).fileFor(threadId);
      mkdirSync(new FileThreadStore({ stateDir }).threadsDir, { recursive: true });
    });

    it.each([
      ["invalid JSON", () => writeFileSync(file, `{"schemaVersion": 1, "threadId": "${USER_WORDS}`), /not valid UTF-8 JSON/],
      ["too large", () => writeFileSync(file, " ".repeat(MAX_JSON_FILE_BYTES + 1)), /larger than/],
      [
        "not a thread state",
        () => writeFileSync(file, JSON.stringify({ schemaVersion: 1, threadId, secret: USER_WORDS })),
        /not a valid thread state/,
      ],
      ["unreadable", () => mkdirSync(file), /not a regular file/],
    ])("(%s) is logged once, at warn, with STATE_UNAVAILABLE and what is wrong with it", async (_name, spoil, problem) => {
      spoil();
      const input = runInput("chat", { threadId }, CREDENTIALS);
      const { status } = await postRun(service.url, input, auth);
      expect(status).toBe(503);
      const records = logs.records().filter((record) => record.code === "STATE_UNAVAILABLE" && record.threadId === threadId);
      expect(records).toEqual([expect.objectContaining({ level: "warn", status: 503, method: "POST", path: "/", runId: input.runId })]);
      const cause = (records[0]!.err as { cause: { type: string; message: string } }).cause;
      expect(cause.type).toBe("StateUnavailableError");
      expect(cause.message).toMatch(problem);
    });
  });

  it("writes one JSON line per record, with its time, level and message (read last, over every record)", () => {
    const records = expectOneJsonLinePerRecord(logs);
    expect(records.length).toBeGreaterThanOrEqual(6);
    expect(logs.text().split("\n").filter(Boolean)).toHaveLength(records.length);
  });

  it("never writes a credential or the user's text, whatever happened (read last, over every record)", async () => {
    // A refused body that carries them too.
    expect((await postRun(service.url, { ...runInput(USER_WORDS, {}, CREDENTIALS), messages: "no" }, auth)).status).toBe(400);
    expect((await postRun(service.url, `{"threadId": "${USER_WORDS}", ${JSON.stringify(CREDENTIALS)}`, auth)).status).toBe(400);
    await post(USER_WORDS);
    const text = logs.text();
    expect(text.length).toBeGreaterThan(0);
    for (const forbidden of [...SECRET_STRINGS, ...KERNEL_TEXTS]) expect(text).not.toContain(forbidden);
  });
});
