import { createHash } from "node:crypto";
import os from "node:os";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { A2AClient } from "../../lib/a2a/client.js";
import { postRun, runInput, script, startHarness, waitFor, type Harness } from "../support/service.js";
import { expectValidRun } from "../support/agui.js";

const KERNEL_TOKEN = "kernel-token";

describe("what the service sends the kernel", () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness({ requireToken: KERNEL_TOKEN }, { a2aToken: KERNEL_TOKEN });
  });
  afterAll(() => harness.close());

  it("maps the RunAgentInput onto SendStreamingMessage as the wire contract §1 says, with A2A-Version and the kernel token", async () => {
    // A real (small) PNG: the service decodes every image before it goes on, and sends a small one unchanged.
    const image = (
      await sharp({ create: { width: 2, height: 2, channels: 3, background: "#fff" } })
        .png()
        .toBuffer()
    ).toString("base64");
    const input = runInput(
      "ignored",
      {
        messages: [
          { id: "old-user", role: "user", content: "earlier turn" },
          { id: "a1", role: "assistant", content: "earlier answer" },
          {
            id: "user-42",
            role: "user",
            content: [
              { type: "text", text: "Describe " },
              { type: "image", source: { type: "data", value: image, mimeType: "image/png" } },
            ],
          },
        ],
      },
      {
        model: "  qwen-max ",
        llmApiKey: "sk-secret",
        thinking: { enabled: true, effort: "high", budget: 2048 },
        userId: "u-1",
        channel: "web",
        preferredLanguage: "ja",
        runMode: "normal",
        alibabaCloud: { accessKeyId: "AK", accessKeySecret: "SK", securityToken: "STS", regionId: "cn-hangzhou" },
      },
    );
    const { events } = await postRun(harness.service.url, input);
    await expectValidRun(events);

    const call = harness.kernel.received.find((c) => c.method === "SendStreamingMessage" && JSON.stringify(c.params).includes("user-42"));
    expect(call?.headers["a2a-version"]).toBe("1.0");
    expect(call?.headers.authorization).toBe(`Bearer ${KERNEL_TOKEN}`);
    const contextId = "agui-" + createHash("sha256").update(input.threadId, "utf8").digest("hex").slice(0, 40);
    expect(call?.params).toEqual({
      message: {
        messageId: "user-42",
        role: "ROLE_USER",
        contextId,
        parts: [{ text: "Describe " }, { data: { filename: "agui-image-1", bytes: image }, mediaType: "image/png" }],
        metadata: {
          iac_code: {
            cwd: os.tmpdir(),
            iac_code_model: "qwen-max",
            iac_code_api_key: "sk-secret",
            thinking: { enabled: true, effort: "high", budget: 2048 },
            user_id: "u-1",
            channel: "web",
            run_mode: "normal",
            cleanupOnly: false,
            rosInvocationId: "ros-1",
            preferredLanguage: "ja",
            alibaba_cloud_access_key_id: "AK",
            alibaba_cloud_access_key_secret: "SK",
            alibaba_cloud_security_token: "STS",
            alibaba_cloud_region_id: "cn-hangzhou",
          },
        },
      },
      configuration: { acceptedOutputModes: ["text/plain"] },
    });
  });

  it("surfaces a kernel that refuses the token as RUN_ERROR A2A_UNAVAILABLE", async () => {
    const other = await startHarness({ requireToken: KERNEL_TOKEN }, { a2aToken: "wrong" });
    try {
      const { events } = await postRun(other.service.url, runInput("chat"));
      await expectValidRun(events);
      expect(events.at(-1)).toMatchObject({ type: "RUN_ERROR", code: "A2A_UNAVAILABLE" });
    } finally {
      await other.close();
    }
  });
});

describe("a live stream", () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness(
      {
        timeScale: 1,
        // Text, then a silence far longer than any test: only a heartbeat or a disconnect can happen next.
        script: () => [
          script.task(),
          script.status("WORKING", { iacCodeSessionId: "s-1" }, "Working on it"),
          { delayMs: 600_000, frame: script.status("COMPLETED").frame },
        ],
      },
      { heartbeatMs: 25 },
    );
  });
  afterAll(() => harness.close());

  it("sends `: heartbeat` comments while the kernel is quiet, and cancels the A2A task when the client disconnects", async () => {
    const abort = new AbortController();
    const response = await fetch(harness.service.url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(runInput("slow")),
      signal: abort.signal,
    });
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let raw = "";
    // A heartbeat may also come before the text (the kernel's first frames take longer than 25 ms on a
    // loaded machine): read on until one comes after it, while the kernel is quiet.
    const text = '"type":"TEXT_MESSAGE_CONTENT"';
    const heartbeatAfterText = () => raw.includes(text) && raw.indexOf(": heartbeat\n\n", raw.indexOf(text)) !== -1;
    // The session event names the task once its id is on disk, which may be after the first text and, on a loaded
    // machine, after that heartbeat too: read on until it has come as well.
    const taskNamed = () => raw.includes('"taskId":"');
    while (!(heartbeatAfterText() && taskNamed())) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`stream ended before text, a heartbeat after it and the task's id:\n${raw}`);
      raw += decoder.decode(value, { stream: true });
    }
    // The heartbeat is a comment, never an AG-UI event.
    expect(raw).not.toContain('heartbeat"');

    const taskId = /"taskId":"([^"]+)"/.exec(raw)?.[1];
    expect(taskId).toBeDefined();
    abort.abort();
    await waitFor(() =>
      harness.kernel.received.some((call) => call.method === "CancelTask" && (call.params as { id?: string }).id === taskId),
    );
    const task = await new A2AClient({ url: harness.kernel.url }).getTask(taskId!);
    expect(task).toMatchObject({ status: { state: "TASK_STATE_CANCELED" } });
  });
});
