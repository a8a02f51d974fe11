/**
 * What the reference's real client sends in `forwardedProps.iacCode`
 * (issue 13): LLM headers, null for optional values, thinking without
 * `enabled`, guidance fields, a workspace that does not exist yet. Through
 * the real service and the demo kernel: the run finishes, the kernel gets
 * `llm_headers` only when they were sent, and the headers reach neither the
 * thread's state file nor the log.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { EventType } from "@ag-ui/core";
import { startService, type RunningService } from "../../lib/server.js";
import { startReplayKernel, type ReplayKernel } from "../../lib/kernel/replay-kernel.js";
import { expectValidRun } from "../support/agui.js";
import { captureLogs, type CapturedLogs } from "../support/logs.js";
import { postRun, runInput, testConfig, uniqueId } from "../support/service.js";

const HEADER_SECRET = "Bearer llm-header-secret-7301";

interface SentMessage {
  message: { messageId: string; metadata: { iac_code: Record<string, unknown> } };
}

describe("a real client's forwardedProps.iacCode", () => {
  let kernel: ReplayKernel;
  let service: RunningService;
  let logs: CapturedLogs;
  let stateDir: string;

  beforeAll(async () => {
    kernel = await startReplayKernel({ timeScale: 0 });
    const config = testConfig({ a2aUrl: kernel.url });
    stateDir = config.stateDir;
    logs = captureLogs("trace");
    service = await startService(config, { log: logs.logger });
  });
  afterAll(async () => {
    await service.close();
    await kernel.close();
  });

  const sentFor = (messageId: string) =>
    kernel.received
      .filter((call) => call.method === "SendStreamingMessage")
      .map((call) => call.params as SentMessage)
      .find((params) => params.message.messageId === messageId)!.message.metadata.iac_code;

  it("runs to RUN_FINISHED with llmHeaders and null optionals, the headers forwarded as llm_headers", async () => {
    const input = runInput(
      "chat",
      {},
      {
        llmHeaders: { Authorization: HEADER_SECRET },
        model: null,
        userId: null,
        channel: null,
        preferredLanguage: null,
        candidatePresentation: null,
        runMode: null,
        pipelineName: null,
        guidanceId: null,
        inputDigest: null,
        executionFence: null,
        alibabaCloud: null,
        thinking: { effort: "high", budget: null },
      },
    );
    const { status, events } = await postRun(service.url, input);
    expect(status).toBe(200);
    await expectValidRun(events);
    expect(events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED });
    const sent = sentFor(input.messages[0]!.id);
    expect(sent.llm_headers).toEqual({ Authorization: HEADER_SECRET });
    expect(sent.thinking).toEqual({ enabled: false, effort: "high" });
    expect(sent).not.toHaveProperty("iac_code_model");
    expect(sent).not.toHaveProperty("user_id");

    // The echo, the state file and the log never carry the headers.
    expect(JSON.stringify(events)).not.toContain("llm-header-secret");
    const threads = path.join(stateDir, "threads");
    for (const file of readdirSync(threads)) expect(readFileSync(path.join(threads, file), "utf8")).not.toContain("llm-header-secret");
    expect(logs.text()).not.toContain("llm-header-secret");
  });

  it("sends no llm_headers when the client sent none", async () => {
    const input = runInput("chat");
    const { events } = await postRun(service.url, input);
    await expectValidRun(events);
    expect(sentFor(input.messages[0]!.id)).not.toHaveProperty("llm_headers");
  });

  it("creates a workspace inside an allowed root that does not exist yet, and refuses a file", async () => {
    const fresh = path.join(os.tmpdir(), uniqueId("agui-fresh-workspace"), "project");
    const input = runInput("chat", {}, { cwd: fresh });
    const { events } = await postRun(service.url, input);
    await expectValidRun(events);
    expect(statSync(fresh).isDirectory()).toBe(true);
    expect(sentFor(input.messages[0]!.id).cwd).toBe(fresh);

    const file = path.join(os.tmpdir(), uniqueId("agui-workspace-file"));
    writeFileSync(file, "not a directory");
    const refused = await postRun(service.url, runInput("chat", {}, { cwd: file }));
    expect(refused.status).toBe(400);
    expect(refused.json).toMatchObject({ error: { code: "INVALID_INPUT" } });
  });
});
