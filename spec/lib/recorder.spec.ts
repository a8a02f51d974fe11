/**
 * Recorder mode (`IAC_CODE_AGUI_RECORD_DIR`): real runs through the service
 * and the replay kernel are recorded, the recordings parse with the kernel's
 * own parser and replay to the same AG-UI event sequence, credentials never
 * reach the file, and a recorder that cannot write never hurts a run.
 */
import { afterAll, afterEach, describe, expect, it } from "@jest/globals";
import { copyFile, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { EventType, type AGUIEvent, type Interrupt } from "@ag-ui/core";
import { defer, firstValueFrom, lastValueFrom, Observable, of, Subject, take, throwError, toArray } from "rxjs";
import type { JsonRpcResult } from "../../lib/a2a/client.js";
import { A2AClient } from "../../lib/a2a/client.js";
import { executionFailed, unavailable } from "../../lib/a2a/rpc-errors.js";
import { parseFixture, type FixtureSection } from "../../lib/fixtures/fixture-format.js";
import { withPlaceholders } from "../../lib/fixtures/placeholders.js";
import { listFixtures } from "../../lib/kernel/fixtures.js";
import { Recorder, recordingClient } from "../../lib/recorder/recording-client.js";
import { isSecretKey, redact, REDACTED, secretsIn } from "../../lib/recorder/redact.js";
import { expectValidRun } from "../support/agui.js";
import { captureLogs } from "../support/logs.js";
import { postRun, runInput, script, startHarness, uniqueId, waitFor, type Harness } from "../support/service.js";

const tempDirs: string[] = [];
async function tempDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}
afterAll(async () => {
  await Promise.all(tempDirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

const harnesses: Harness[] = [];
async function harness(...args: Parameters<typeof startHarness>): Promise<Harness> {
  const started = await startHarness(...args);
  harnesses.push(started);
  return started;
}
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((h) => h.close()));
});

const recordings = async (dir: string) => (await readdir(dir).catch(() => [] as string[])).filter((name) => name.endsWith(".jsonl")).sort();

/** Polls `probe` (a condition, not a fixed sleep) until it gives a value. */
async function until<T>(probe: () => Promise<T | undefined>, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** The one recording in `dir`, once it satisfies `ready` (files appear whole: they are renamed into place). */
function recordingIn(dir: string, ready: (text: string) => boolean = () => true): Promise<{ name: string; file: string; text: string }> {
  return until(async () => {
    const list = await recordings(dir);
    if (list.length !== 1) return undefined;
    const file = path.join(dir, list[0]!);
    const text = await readFile(file, "utf8");
    return ready(text) ? { name: list[0]!.slice(0, -".jsonl".length), file, text } : undefined;
  });
}

/** The live task id, as the header comment names it. */
const headerTaskId = (text: string) => /^# iac-code-agui recording of task (\S+),/.exec(text)?.[1];

const types = (events: readonly AGUIEvent[]) =>
  events.map((event) => (event.type === EventType.CUSTOM ? `CUSTOM:${(event as { name: string }).name}` : event.type));

const outcomeOf = (events: readonly AGUIEvent[]) => (events.at(-1) as { outcome?: { type: string; interrupts?: Interrupt[] } }).outcome;

/** A new run, then (when `answer` is given) its interrupt answered on the same thread. */
async function runScenario(url: string, text: string, answer?: unknown): Promise<AGUIEvent[][]> {
  const first = runInput(text);
  const paused = await postRun(url, first);
  await expectValidRun(paused.events);
  if (answer === undefined) return [paused.events];
  const interrupt = outcomeOf(paused.events)!.interrupts![0]!;
  const resumed = await postRun(url, {
    ...first,
    runId: uniqueId("run"),
    resume: [{ interruptId: interrupt.id, status: "resolved", payload: answer }],
  });
  await expectValidRun(resumed.events);
  return [paused.events, resumed.events];
}

/** Records `fixture` (with `answer` for its interrupt) through the service, then replays the recording through a fresh kernel. */
async function recordAndReplay(fixture: string, answer?: unknown) {
  const recordDir = path.join(await tempDir("agui-rec-"), "recordings");
  const recorder = await harness({}, { recordDir });
  const original = await runScenario(recorder.service.url, fixture, answer);
  const turns = original.length;
  const recording = await recordingIn(recordDir, (text) => parseFixture(text).length === turns);
  const sections = parseFixture(recording.text, recording.file);

  const fixturesDir = await tempDir("agui-replay-");
  await copyFile(recording.file, path.join(fixturesDir, `${recording.name}.jsonl`));
  const replayer = await harness({ fixturesDir });
  const replayed = await runScenario(replayer.service.url, recording.name, answer);
  const taskIds = recorder.kernel.received.flatMap((call) => {
    const message = (call.params as { message?: { taskId?: string } } | undefined)?.message;
    return message?.taskId ? [message.taskId] : [];
  });
  return { recordDir, recording, sections, original, replayed, taskIds };
}

describe("recorder: credentials", () => {
  it("knows the credential keys, case and separators aside, and leaves counts and MCP progress tokens alone", () => {
    for (const key of [
      "iac_code_api_key",
      "llmApiKey",
      "alibaba_cloud_access_key_secret",
      "alibaba_cloud_security_token",
      "accessKeySecret",
      "securityToken",
      "authorization",
      "Authorization",
      "token",
      "apiKey",
      "API_KEY",
      "password",
      "secret",
      "x-api-key",
      "client_secret",
    ]) {
      expect([key, isSecretKey(key)]).toEqual([key, true]);
    }
    for (const key of ["progressToken", "input_tokens", "outputTokens", "alibaba_cloud_access_key_id", "toolUseId", "text", "cwd"]) {
      expect([key, isSecretKey(key)]).toEqual([key, false]);
    }
  });

  it("redacts by key at any depth and by value wherever a known credential appears", () => {
    const secrets = secretsIn({
      message: {
        metadata: { iac_code: { iac_code_api_key: "sk-live-123456", cwd: "/tmp", llm_headers: { Authorization: "Bearer abcdef" } } },
      },
    });
    expect([...secrets].sort()).toEqual(["Bearer abcdef", "sk-live-123456"]);
    const frame = {
      statusUpdate: {
        metadata: {
          iac_code: {
            nested: [{ Password: { any: "thing" } }],
            echo: "sk-live-123456",
            said: "your key sk-live-123456, ok",
            usage: { input_tokens: 3 },
          },
        },
        token: 7,
      },
    };
    expect(redact(frame, secrets)).toEqual({
      statusUpdate: {
        metadata: {
          iac_code: { nested: [{ Password: REDACTED }], echo: REDACTED, said: `your key ${REDACTED}, ok`, usage: { input_tokens: 3 } },
        },
        token: REDACTED,
      },
    });
    // The input is not changed.
    expect(frame.statusUpdate.token).toBe(7);
  });

  it("replaces the live ids inside strings with the fixture placeholders", () => {
    const ids = { taskId: "task-0123456789", contextId: "agui-abcdef0123" };
    expect(withPlaceholders({ a: "task-0123456789", b: ["task-0123456789-message", "agui-abcdef0123:x"], c: 1 }, ids)).toEqual({
      a: "${taskId}",
      b: ["${taskId}-message", "${contextId}:x"],
      c: 1,
    });
  });
});

describe("recorder: real runs recorded and replayed", () => {
  it("reasoning-tools: one 0600 file in a 0700 directory, parsed by the kernel, replays to the same AG-UI events", async () => {
    const { recordDir, recording, sections, original, replayed } = await recordAndReplay("reasoning-tools");
    // Time, task, then the first message's words: "reasoning-tools" is found by its name.
    expect(recording.name).toMatch(/^\d{8}-\d{6}-[A-Za-z0-9]{1,8}-reasoning-tools$/);
    expect((await stat(recordDir)).mode & 0o777).toBe(0o700);
    expect((await stat(recording.file)).mode & 0o777).toBe(0o600);
    const [header] = recording.text.split("\n");
    expect(header).toMatch(/^# .*"reasoning-tools"/);
    expect(sections).toHaveLength(1);
    expect(sections[0]!.lines.every((line) => line.frame !== undefined && Number.isInteger(line.delayMs))).toBe(true);
    // The frame lines name the task and its context only through the placeholders.
    const taskId = headerTaskId(recording.text)!;
    expect(taskId).toMatch(/^[0-9a-f-]{36}$/);
    const frameLines = recording.text.split("\n").filter((line) => line.startsWith("{"));
    expect(frameLines.some((line) => line.includes("${taskId}"))).toBe(true);
    expect(frameLines.some((line) => line.includes("${contextId}"))).toBe(true);
    for (const line of frameLines) expect(line).not.toContain(taskId);
    expect(frameLines.join("\n")).not.toMatch(/agui-[0-9a-f]{40}/);

    expect(types(replayed[0]!)).toEqual(types(original[0]!));
    expect(types(original[0]!)).toEqual(
      expect.arrayContaining(["REASONING_START", "TOOL_CALL_START", "CUSTOM:iac-code.artifact.v1", "TEXT_MESSAGE_CONTENT"]),
    );
  });

  it("permission: the resume is a turn-1 section of the same file, and interrupt + resume replay alike", async () => {
    const { recordDir, recording, sections, original, replayed, taskIds } = await recordAndReplay("permission", { decision: "allow_once" });
    expect(await recordings(recordDir)).toHaveLength(1);
    // What the run did names it, once, though the message said it too.
    expect(recording.name).toMatch(/^\d{8}-\d{6}-[A-Za-z0-9]{1,8}-permission$/);
    expect(sections.map(({ turn, when }: FixtureSection) => ({ turn, when }))).toEqual([
      { turn: 0, when: undefined },
      { turn: 1, when: '"decision":"allow_once"' },
    ]);
    // The live task id (which the resume named) appears in no frame line, only in the header comment.
    expect(taskIds.length).toBeGreaterThan(0);
    for (const line of recording.text.split("\n").filter((l) => !l.startsWith("#"))) {
      for (const taskId of taskIds) expect(line).not.toContain(taskId);
    }
    expect(outcomeOf(original[0]!)?.type).toBe("interrupt");
    expect(outcomeOf(replayed[0]!)?.type).toBe("interrupt");
    expect(types(replayed[0]!)).toEqual(types(original[0]!));
    expect(types(replayed[1]!)).toEqual(types(original[1]!));
    expect(outcomeOf(replayed[1]!)?.type).toBe("success");
  });

  it("a run carrying credentials, with a kernel that echoes them, leaves none of them in the file", async () => {
    const credentials = {
      llmApiKey: "sk-llm-7f3a9c2e1b",
      alibabaCloud: { accessKeyId: "LTAI5tAccessKeyId", accessKeySecret: "AKS-secret-55aa66bb", securityToken: "STS.token-99cc88dd" },
    };
    const secretValues = [credentials.llmApiKey, credentials.alibabaCloud.accessKeySecret, credentials.alibabaCloud.securityToken];
    const echo = (turn: { message: unknown }) => {
      const iac = (turn.message as { metadata: { iac_code: Record<string, string> } }).metadata.iac_code;
      const key = iac.iac_code_api_key!;
      const secret = iac.alibaba_cloud_access_key_secret!;
      const sts = iac.alibaba_cloud_security_token!;
      return [
        script.task(),
        script.status("WORKING", {
          echoed: { key, nested: [{ note: `sts=${sts}` }] },
          accessKeySecret: secret,
          debug: { headers: { authorization: `Bearer ${key}` } },
        }),
        script.status("WORKING", undefined, `I used the key ${key} and ${secret}.`),
        script.status("COMPLETED"),
      ];
    };
    const recordDir = await tempDir("agui-rec-secrets-");
    const h = await harness({ script: echo }, { recordDir });
    const result = await postRun(h.service.url, runInput("deploy", {}, credentials));
    await expectValidRun(result.events);
    // The kernel did echo them: the run's own text shows the key.
    expect(JSON.stringify(result.events)).toContain(credentials.llmApiKey);

    const recording = await recordingIn(recordDir);
    expect(parseFixture(recording.text)).toHaveLength(1);
    for (const value of secretValues) expect(recording.text).not.toContain(value);
    expect(recording.text).toContain(REDACTED);
    // The request itself is not recorded: the history's user turn is kept empty.
    expect(recording.text).not.toContain(credentials.alibabaCloud.accessKeyId);
  });
});

describe("recorder: failures never reach the run", () => {
  it("a record dir that is a file: the run is whole, the failure is logged", async () => {
    const parent = await tempDir("agui-rec-file-");
    const recordDir = path.join(parent, "not-a-dir");
    await writeFile(recordDir, "x");
    const logs = captureLogs();
    const h = await harness({}, { recordDir }, { log: logs.logger });
    const result = await postRun(h.service.url, runInput("reasoning-tools"));
    await expectValidRun(result.events);
    expect(outcomeOf(result.events)?.type).toBe("success");
    await waitFor(() => logs.records().some((record) => record.level === "warn" && record.msg.startsWith("recorder: cannot write")));
    expect(await readFile(recordDir, "utf8")).toBe("x");
  });
});

/** Frames for Recorder unit tests, shaped as the kernel sends them. */
const TASK_ID = "task-unit-000000000001";
const CONTEXT_ID = "agui-unit-context-0001";
const frames = {
  task: (state = "TASK_STATE_SUBMITTED"): JsonRpcResult => ({ task: { id: TASK_ID, contextId: CONTEXT_ID, status: { state } } }),
  status: (state: string, text?: string): JsonRpcResult => ({
    statusUpdate: {
      taskId: TASK_ID,
      contextId: CONTEXT_ID,
      status: { state, ...(text ? { message: { messageId: `${TASK_ID}-message`, role: "ROLE_AGENT", parts: [{ text }] } } : {}) },
    },
  }),
};
const firstCall = { message: { messageId: "m1", role: "ROLE_USER", contextId: CONTEXT_ID, parts: [{ text: "hello there" }] } };
const answerCall = (decision: string) => ({
  message: {
    messageId: "m2",
    role: "ROLE_USER",
    contextId: CONTEXT_ID,
    taskId: TASK_ID,
    parts: [
      {
        data: { schemaVersion: 1, kind: "permission", requestTaskId: TASK_ID, inputId: "p1", toolUseId: "t1", decision },
        mediaType: "application/json",
      },
    ],
  },
});

describe("recorder: the stream and the file", () => {
  it("taps the upstream: one subscription, the same frame objects, the same error", async () => {
    const dir = await tempDir("agui-rec-unit-");
    const recorder = new Recorder(dir);
    const sent = [frames.task(), frames.status("TASK_STATE_WORKING", "hi")];
    const failure = executionFailed({ code: -32603, message: "boom" });
    let subscriptions = 0;
    const upstream = defer(() => {
      subscriptions++;
      return new Observable<JsonRpcResult>((subscriber) => {
        sent.forEach((frame) => subscriber.next(frame));
        subscriber.error(failure);
      });
    });
    const seen: JsonRpcResult[] = [];
    const error = await lastValueFrom(recorder.record(firstCall, upstream)).catch((caught: unknown) => caught);
    expect(error).toBe(failure);
    expect(subscriptions).toBe(1);
    await lastValueFrom(recorder.record(firstCall, of(...sent)).pipe(toArray())).then((got) => seen.push(...got));
    expect(seen[0]).toBe(sent[0]);
    expect(seen[1]).toBe(sent[1]);

    await recorder.idle();
    const files = await recordings(dir);
    expect(files).toHaveLength(2);
    const withError = await Promise.all(files.map((name) => readFile(path.join(dir, name), "utf8")));
    const errorFile = withError.find((text) => text.includes('"error"'))!;
    const [section] = parseFixture(errorFile);
    expect(section!.lines.at(-1)).toEqual({ delayMs: expect.any(Number), error: { code: -32603, message: "boom" } });
  });

  it("an upstream failure that is no JSON-RPC error is only noted, and the file still parses", async () => {
    const dir = await tempDir("agui-rec-unit-");
    const recorder = new Recorder(dir);
    await lastValueFrom(
      recorder.record(
        firstCall,
        defer(
          () =>
            new Observable<JsonRpcResult>((s) => {
              s.next(frames.task());
              s.error(unavailable(new Error("socket hang up")));
            }),
        ),
      ),
    ).catch(() => undefined);
    await recorder.idle();
    const [name] = await recordings(dir);
    const text = await readFile(path.join(dir, name!), "utf8");
    expect(text).toContain("# the upstream stream failed here (A2A_UNAVAILABLE)");
    expect(parseFixture(text)[0]!.lines).toHaveLength(1);
  });

  it("a run that stops reading (an interrupt, a client gone) is recorded up to there", async () => {
    const dir = await tempDir("agui-rec-unit-");
    const recorder = new Recorder(dir);
    const live = new Subject<JsonRpcResult>();
    const got = firstValueFrom(recorder.record(firstCall, live).pipe(take(2), toArray()));
    live.next(frames.task());
    live.next(frames.status("TASK_STATE_INPUT_REQUIRED"));
    await got;
    expect(live.observed).toBe(false);
    await recorder.idle();
    const [name] = await recordings(dir);
    expect(parseFixture(await readFile(path.join(dir, name!), "utf8"))[0]!.lines).toHaveLength(2);
  });

  it("the static secrets (the service's own tokens) are redacted too", async () => {
    const dir = await tempDir("agui-rec-unit-");
    const recorder = new Recorder(dir, { secrets: ["a2a-token-abcdef", undefined, ""] });
    await lastValueFrom(recorder.record(firstCall, of(frames.task(), frames.status("TASK_STATE_COMPLETED", "token a2a-token-abcdef"))));
    await recorder.idle();
    const [name] = await recordings(dir);
    expect(await readFile(path.join(dir, name!), "utf8")).not.toContain("a2a-token-abcdef");
  });

  it("a turn too large to keep in memory is dropped whole and logged, the stream untouched", async () => {
    const dir = await tempDir("agui-rec-unit-");
    const logs = captureLogs();
    const recorder = new Recorder(dir, { maxTurnChars: 300, log: logs.logger });
    const sent = [frames.task(), frames.status("TASK_STATE_WORKING", "x".repeat(400)), frames.status("TASK_STATE_COMPLETED")];
    expect(await lastValueFrom(recorder.record(firstCall, of(...sent)).pipe(toArray()))).toEqual(sent);
    await recorder.idle();
    expect(await recordings(dir)).toEqual([]);
    expect(logs.records().map((record) => record.msg)).toEqual(["recorder: reading a frame failed; this call is not recorded"]);
  });

  it("a crash mid-write leaves the previous recording whole: the kernel never sees a torn file", async () => {
    const dir = await tempDir("agui-rec-crash-");
    // Set to hold the next write between its complete temp file and the rename.
    let holdNext = false;
    let held: { temp: string; release: (crash?: Error) => void } | undefined;
    const logs = captureLogs();
    const recorder = new Recorder(dir, {
      log: logs.logger,
      beforeRename: (temp) => {
        if (!holdNext) return Promise.resolve();
        holdNext = false;
        return new Promise<void>((resolve, reject) => {
          held = { temp, release: (crash) => (crash ? reject(crash) : resolve()) };
        });
      },
    });
    // Turn 0, written normally.
    await lastValueFrom(recorder.record(firstCall, of(frames.task(), frames.status("TASK_STATE_INPUT_REQUIRED"))));
    await recorder.idle();
    const [name] = await recordings(dir);
    const file = path.join(dir, name!);
    const turn0 = await readFile(file, "utf8");

    // Turn 1: the write stops between the complete temp file and the rename, as a process killed there would.
    holdNext = true;
    await lastValueFrom(
      recorder.record(answerCall("deny"), of(frames.task("TASK_STATE_INPUT_REQUIRED"), frames.status("TASK_STATE_COMPLETED", "denied"))),
    );
    await waitFor(() => held !== undefined);
    expect(await readdir(dir)).toHaveLength(2); // the recording and the temp file
    expect(await listFixtures(dir)).toEqual([name!.replace(/\.jsonl$/, "")]); // the kernel lists only the recording…
    expect(await readFile(file, "utf8")).toBe(turn0); // …which is still the whole turn 0
    expect(parseFixture(turn0).map((s) => s.turn)).toEqual([0]);

    // The crash: the temp file goes, the recording stays as it was, and the failure is logged.
    held!.release(new Error("killed"));
    await recorder.idle();
    expect(logs.records()).toMatchObject([{ level: "warn", err: { type: "Error" } }]);
    expect(await readdir(dir)).toEqual([name]);
    expect(await readFile(file, "utf8")).toBe(turn0);

    // The next answer is appended as turn 1, with its `when`.
    await lastValueFrom(
      recorder.record(
        answerCall("allow_once"),
        of(frames.task("TASK_STATE_INPUT_REQUIRED"), frames.status("TASK_STATE_COMPLETED", "done")),
      ),
    );
    await recorder.idle();
    const sections = parseFixture(await readFile(file, "utf8"));
    expect(sections.map(({ turn, when }) => ({ turn, when }))).toEqual([
      { turn: 0, when: undefined },
      { turn: 1, when: '"decision":"allow_once"' },
    ]);
  });

  it("an answer the kernel refused is no turn; a resume of a task recorded before a restart goes on in its file", async () => {
    const dir = await tempDir("agui-rec-unit-");
    const first = new Recorder(dir);
    await lastValueFrom(first.record(firstCall, of(frames.task(), frames.status("TASK_STATE_INPUT_REQUIRED"))));
    await first.idle();
    // A new recorder (a restarted service) finds the task's file by its short id.
    const second = new Recorder(dir);
    await lastValueFrom(
      second.record(
        answerCall("maybe"),
        throwError(() => executionFailed({ code: -32602, message: "Invalid permission answer" })),
      ),
    ).catch(() => undefined);
    await lastValueFrom(
      second.record(answerCall("deny"), of(frames.task("TASK_STATE_INPUT_REQUIRED"), frames.status("TASK_STATE_COMPLETED"))),
    );
    await second.idle();
    const files = await recordings(dir);
    expect(files).toHaveLength(1);
    const text = await readFile(path.join(dir, files[0]!), "utf8");
    expect(text).toContain("# an answer was refused before any frame (JSON-RPC -32602); not a turn");
    expect(parseFixture(text).map(({ turn, when }) => ({ turn, when }))).toEqual([
      { turn: 0, when: undefined },
      { turn: 1, when: '"decision":"deny"' },
    ]);
  });

  it("an answer to a task with no recording starts a file of its own at turn 1, without the user's words", async () => {
    const dir = await tempDir("agui-rec-unit-");
    const recorder = new Recorder(dir);
    const answer = { message: { ...answerCall("deny").message, parts: [{ text: "my private answer" }] } };
    await lastValueFrom(recorder.record(answer, of(frames.task("TASK_STATE_INPUT_REQUIRED"), frames.status("TASK_STATE_COMPLETED"))));
    await recorder.idle();
    const [name] = await recordings(dir);
    // Named by what the run did (nothing to say here), never by the answer's words.
    expect(name).toMatch(/^\d{8}-\d{6}-[A-Za-z0-9]{1,8}\.jsonl$/);
    const text = await readFile(path.join(dir, name!), "utf8");
    expect(text).toContain("turn 0 is missing");
    expect(text).not.toContain("my private answer");
    expect(parseFixture(text).map(({ turn, when }) => ({ turn, when }))).toEqual([{ turn: 1, when: undefined }]);
  });

  it("names a file by what the run did and the first words of its message: safe characters, bounded, no credential", async () => {
    const dir = await tempDir("agui-rec-unit-");
    const recorder = new Recorder(dir, { secrets: ["sk-live-123456"] });
    const words = "sk-live-123456 Déployez   le VPC/../../etc à Hangzhou ; 日本語 " + "and-then-some ".repeat(50);
    const call = { message: { ...firstCall.message, parts: [{ text: words }] } };
    const pipelineStatus: JsonRpcResult = {
      statusUpdate: {
        taskId: TASK_ID,
        contextId: CONTEXT_ID,
        status: { state: "TASK_STATE_WORKING" },
        metadata: { iac_code: { pipeline: {} } },
      },
    };
    await lastValueFrom(recorder.record(call, of(frames.task(), pipelineStatus, frames.status("TASK_STATE_FAILED", "quota"))));
    await recorder.idle();
    const [name] = await recordings(dir);
    expect(name).toMatch(/^\d{8}-\d{6}-[A-Za-z0-9]{1,8}-pipeline-failed-redacted-deployez-le-vpc\.jsonl$/);
    expect(name!.length).toBeLessThanOrEqual(15 + 1 + 8 + 1 + 40 + ".jsonl".length);
    // A name is a fixture name: the kernel lists it, and sending it replays it.
    expect(await listFixtures(dir)).toEqual([name!.slice(0, -".jsonl".length)]);
  });

  it("without a record dir the client is returned as it is; with one, other calls reach the client itself", async () => {
    const client = new A2AClient({ url: "http://127.0.0.1:9/" });
    expect(recordingClient(client, undefined)).toBe(client);
    const dir = path.join(await tempDir("agui-rec-unit-"), "nested", "dir");
    const recorded = recordingClient(client, dir);
    expect(recorded).not.toBe(client);
    // A #private-field method works through the proxy: it fails for the unreachable port, not for `this`.
    await expect(recorded.getTask("t")).rejects.toMatchObject({ code: "A2A_UNAVAILABLE" });
  });
});
