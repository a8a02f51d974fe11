/**
 * `POST /sandbox/replay` over real HTTP: a recorded fixture's text in, the
 * AG-UI stream the service's own chain makes of it out, with no kernel to
 * call (the service points at a closed port). Every stream passes the
 * shared AG-UI checks.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import type { AGUIEvent } from "@ag-ui/core";
import { ConfigError, loadConfig } from "../../lib/config.js";
import { MAX_REPLAY_BODY_BYTES } from "../../lib/http/sandbox-replay.js";
import { FIXTURES_DIR } from "../../lib/paths.js";
import { startService, type RunningService } from "../../lib/server.js";
import { expectValidRun } from "../support/agui.js";
import { postRun, testConfig } from "../support/service.js";

const TOKEN = "replay-token";
// Nothing listens on port 9 (discard) on loopback: a call to the kernel would fail the run.
const NO_KERNEL = "http://127.0.0.1:9/";

const fixture = (name: string) => readFileSync(path.join(FIXTURES_DIR, `${name}.jsonl`), "utf8");
const types = (events: readonly AGUIEvent[]) => events.map((event) => event.type);

describe("the sandbox's fixture replay", () => {
  let service: RunningService;
  let replay: (body: unknown, headers?: Record<string, string>) => ReturnType<typeof postRun>;

  beforeAll(async () => {
    service = await startService(testConfig({ a2aUrl: NO_KERNEL, authToken: TOKEN }));
    replay = (body, headers = { authorization: `Bearer ${TOKEN}` }) => postRun(`${service.url}/sandbox/replay`, body, headers);
  });
  afterAll(() => service?.close());

  it("projects a recorded pipeline run as the service would stream it, without a kernel", async () => {
    const result = await replay({ fixture: fixture("pipeline"), timeScale: 0 });
    expect(result.status).toBe(200);
    await expectValidRun(result.events);
    const steps = result.events.filter((event) => event.type === "STEP_STARTED").map((event) => event.stepName);
    expect(steps).toEqual(["plan", "generate", "candidate:subp-generate-0:draft", "candidate:subp-generate-1:draft"]);
    const pipeline = result.events.filter((event) => event.type === "CUSTOM" && event.name === "iac-code.pipeline.v1");
    expect(pipeline.map((event) => (event as { value: { eventType: string } }).value.eventType)).toEqual(
      expect.arrayContaining(["pipeline_started", "candidate_started", "candidate_selected", "pipeline_completed"]),
    );
    expect(result.events.at(-1)).toMatchObject({ type: "RUN_FINISHED", outcome: { type: "success" } });
    // The recording's placeholders are filled: no `${taskId}` reaches the client.
    expect(result.raw).not.toContain("${taskId}");
  });

  it("ends a turn that parks the task with its interrupts, and plays a later turn picked by the answer", async () => {
    const first = await replay({ fixture: fixture("permission"), timeScale: 0 });
    await expectValidRun(first.events);
    expect(first.events.at(-1)).toMatchObject({
      type: "RUN_FINISHED",
      outcome: { type: "interrupt", interrupts: [{ metadata: { kind: "permission" } }] },
    });

    const denied = await replay({ fixture: fixture("permission"), turn: 1, answer: '"decision":"deny"', timeScale: 0 });
    await expectValidRun(denied.events);
    const result = denied.events.find((event) => event.type === "TOOL_CALL_RESULT");
    expect(JSON.stringify(result)).toMatch(/denied/i);
  });

  it("turns a recorded JSON-RPC error into the run's RUN_ERROR", async () => {
    const result = await replay({ fixture: fixture("stream-error"), timeScale: 0 });
    await expectValidRun(result.events);
    expect(types(result.events)).toContain("TEXT_MESSAGE_CONTENT");
    expect(result.events.at(-1)).toMatchObject({ type: "RUN_ERROR", code: "A2A_EXECUTION_FAILED" });
  });

  it("ends a recorded drop with a RUN_ERROR that says a replay has no kernel to re-attach to", async () => {
    const result = await replay({ fixture: fixture("pipeline-drop"), timeScale: 0 });
    await expectValidRun(result.events);
    expect(types(result.events)).toContain("STEP_STARTED");
    const end = result.events.at(-1);
    expect(end).toMatchObject({ type: "RUN_ERROR", code: "A2A_UNAVAILABLE" });
    const detail = (end as { metadata?: { "iac-code"?: { detail?: string } } }).metadata?.["iac-code"]?.detail;
    expect(detail).toMatch(/stream dropped at line 10 of turn 0/);
    expect(detail).toMatch(/a replay has no kernel to re-attach to/);
    expect(detail).toMatch(/\(\d+ recorded lines after the drop were not played\)/);
  });

  it("carries a failed task's reason, its status message, into the RUN_ERROR", async () => {
    const result = await replay(
      { fixture: fixture("failing-run"), timeScale: 0 },
      {
        authorization: `Bearer ${TOKEN}`,
        "accept-language": "de",
      },
    );
    await expectValidRun(result.events);
    expect(result.events.at(-1)).toMatchObject({
      type: "RUN_ERROR",
      code: "A2A_EXECUTION_FAILED",
      message: "Die A2A-Ausführung ist fehlgeschlagen.",
      // The kernel's own words, as it said them, whatever the request's language.
      metadata: { "iac-code": { detail: expect.stringContaining("quota exceeded (HTTP 429)") } },
    });
  });

  it("keeps the recorded rhythm, but no pause longer than two seconds", async () => {
    const task =
      '{"delayMs": 0, "frame": {"task": {"id": "${taskId}", "contextId": "${contextId}", "status": {"state": "TASK_STATE_WORKING"}}}}';
    const done =
      '{"delayMs": 60000, "frame": {"statusUpdate": {"taskId": "${taskId}", "contextId": "${contextId}", "status": {"state": "TASK_STATE_COMPLETED"}}}}';
    const started = performance.now();
    const result = await replay({ fixture: `${task}\n${done}\n` });
    const elapsed = performance.now() - started;
    await expectValidRun(result.events);
    expect(elapsed).toBeGreaterThanOrEqual(1_900);
    expect(elapsed).toBeLessThan(30_000);
  }, 40_000);

  it("refuses what is not a fixture with INVALID_INPUT, naming the line, in the request's language", async () => {
    const result = await replay(
      { fixture: '# a comment\n{"delayMs": 0, "frame": {"nope": {}}}\n' },
      { authorization: `Bearer ${TOKEN}`, "accept-language": "en" },
    );
    expect(result.status).toBe(400);
    expect(result.json).toMatchObject({ error: { code: "INVALID_INPUT" } });
    expect((result.json as { error: { message: string } }).error.message).toMatch(
      /^The recorded fixture cannot be replayed: the fixture:2: "frame" must be/,
    );

    const ja = await replay({ fixture: "" }, { authorization: `Bearer ${TOKEN}`, "accept-language": "ja" });
    expect(ja.status).toBe(400);
    expect((ja.json as { error: { message: string } }).error.message).toMatch(/^記録されたフィクスチャを再生できません/);

    const deepFrame = `{"delayMs": 0, "frame": {"task": {"id": "t", "metadata": ${"[".repeat(150)}${"]".repeat(150)}}}}`;
    const deep = await replay({ fixture: `${deepFrame}\n` });
    expect(deep.status).toBe(400);
    expect((deep.json as { error: { message: string } }).error.message).toMatch(/line 1 of turn 0 nests deeper than 100 levels/);

    const noTurn = await replay({ fixture: fixture("chat"), turn: 3 });
    expect((noTurn.json as { error: { message: string } }).error.message).toMatch(/no section for turn 3 \(its turns: 0\)/);
  });

  it("asks for the bearer token as every run does, and caps the upload", async () => {
    const anonymous = await replay({ fixture: fixture("chat") }, {});
    expect(anonymous.status).toBe(401);
    expect(anonymous.json).toMatchObject({ error: { code: "UNAUTHORIZED" } });

    const huge = await replay({ fixture: `# ${"x".repeat(MAX_REPLAY_BODY_BYTES)}\n` });
    expect(huge.status).toBe(413);
    expect(huge.json).toMatchObject({ error: { code: "REQUEST_TOO_LARGE" } });
  });
});

describe("the sandbox switched off", () => {
  it("is read from IAC_CODE_AGUI_SANDBOX or --sandbox: on or off, nothing else", () => {
    expect(loadConfig([], {}).sandbox).toBeUndefined();
    expect(loadConfig([], { IAC_CODE_AGUI_SANDBOX: "off" }).sandbox).toBe("off");
    expect(loadConfig(["--sandbox", "on"], { IAC_CODE_AGUI_SANDBOX: "off" }).sandbox).toBe("on");
    expect(() => loadConfig([], { IAC_CODE_AGUI_SANDBOX: "no" })).toThrow(ConfigError);
  });

  it("serves neither the page nor the replay", async () => {
    const service = await startService(testConfig({ a2aUrl: NO_KERNEL, authToken: TOKEN, sandbox: "off" }));
    try {
      const headers = { authorization: `Bearer ${TOKEN}` };
      for (const route of ["/sandbox", "/sandbox/main.js", "/sandbox/fixtures"]) {
        const response = await fetch(`${service.url}${route}`, { headers });
        expect([route, response.status]).toEqual([route, 404]);
      }
      const replayed = await postRun(`${service.url}/sandbox/replay`, { fixture: fixture("chat"), timeScale: 0 }, headers);
      expect(replayed.status).toBe(404);
      expect(replayed.json).toMatchObject({ error: { code: "NOT_FOUND" } });
    } finally {
      await service.close();
    }
  });
});
