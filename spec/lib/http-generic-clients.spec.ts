/**
 * Generic AG-UI clients (CopilotKit and the like) send no
 * `forwardedProps.iacCode` and declare their frontend actions as `tools`.
 * The strict protocol stays the default; two settings let such a client
 * through: IAC_CODE_AGUI_DEFAULT_CWD and IAC_CODE_AGUI_CLIENT_TOOLS=ignore.
 */
import { mkdtempSync, realpathSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import type { Message } from "@ag-ui/core";
import { ConfigError, loadConfig } from "../../lib/config.js";
import { supportedLanguages, translate } from "../../lib/i18n/index.js";
import { validateRunInput } from "../../lib/validation.js";
import { expectValidRun } from "../support/agui.js";
import { httpAgent, runHttpAgent, transcript, userMessage } from "../support/http-agent.js";
import { postRun, runInput, startHarness, uniqueId, type Harness } from "../support/service.js";

const CHAT_OPENING = "Hi! This is the iac-code-agui demo kernel";
const frontendTool = { name: "showWeather", description: "Shows the weather card in the page", parameters: { type: "object" } };

/** A body as a generic client sends it: no iacCode at all. */
const genericInput = (text: string, overrides: Record<string, unknown> = {}) => {
  const { forwardedProps: _strict, ...rest } = runInput(text);
  return { ...rest, forwardedProps: {}, ...overrides };
};

type SendCall = { params: { message: { metadata: { iac_code: { cwd: string; rosInvocationId: string } } } } };

describe("the strict protocol, by default", () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness();
  });
  afterAll(() => harness.close());

  it("refuses a request without forwardedProps.iacCode as a forwarded-properties failure", async () => {
    const { status, json } = await postRun(harness.service.url, genericInput("chat"));
    expect(status).toBe(400);
    expect(json).toEqual({
      error: {
        code: "INVALID_INPUT",
        message: "Invalid iac-code forwarded properties.",
        detail: "/forwardedProps: must have required property 'iacCode'",
      },
    });
  });

  it.each(supportedLanguages())("says client tools are refused, and names `tools` in the detail (%s)", async (language) => {
    const body = runInput("chat", { tools: [frontendTool] }, { preferredLanguage: language });
    const { status, json } = await postRun(harness.service.url, body);
    expect(status).toBe(400);
    const { code, message, detail } = (json as { error: { code: string; message: string; detail: string } }).error;
    expect(code).toBe("INVALID_INPUT");
    expect(message).toBe(translate("INVALID_INPUT.tools", language));
    expect(detail).toMatch(/\btools\b/);
    for (const text of [message, detail]) {
      expect(text).not.toContain("forwarded properties");
      expect(text).not.toContain("転送プロパティ");
    }
  });

  it("names `tools` when the field is missing, too", () => {
    const { tools: _tools, ...body } = runInput("chat");
    expect(() => validateRunInput(body, { allowedCwds: [os.tmpdir()] })).toThrow(
      expect.objectContaining({ code: "INVALID_INPUT", params: expect.objectContaining({ reason: "tools" }) }),
    );
  });
});

describe("IAC_CODE_AGUI_DEFAULT_CWD", () => {
  let harness: Harness;
  let workspace: string;
  const sent = () => harness.kernel.received.filter((call) => call.method === "SendStreamingMessage") as unknown as SendCall[];
  beforeAll(async () => {
    workspace = realpathSync(mkdtempSync(path.join(os.tmpdir(), "agui-default-cwd-")));
    harness = await startHarness({}, { defaultCwd: workspace });
  });
  afterAll(() => harness.close());

  it("runs a request without iacCode in that cwd, with an invocation id derived from the thread", async () => {
    const first = genericInput("chat");
    const { status, events } = await postRun(harness.service.url, first);
    expect(status).toBe(200);
    await expectValidRun(events);
    expect(events.at(-1)).toMatchObject({ type: "RUN_FINISHED" });
    const { cwd, rosInvocationId } = sent().at(-1)!.params.message.metadata.iac_code;
    expect(cwd).toBe(workspace);
    expect(rosInvocationId).toMatch(/^agui-thread-[0-9a-f]{40}$/);

    // The same thread keeps its invocation; another thread gets its own.
    await expectValidRun((await postRun(harness.service.url, { ...first, runId: uniqueId("run") })).events);
    expect(sent().at(-1)!.params.message.metadata.iac_code.rosInvocationId).toBe(rosInvocationId);
    await expectValidRun((await postRun(harness.service.url, genericInput("chat"))).events);
    expect(sent().at(-1)!.params.message.metadata.iac_code.rosInvocationId).not.toBe(rosInvocationId);
  });

  it("fills in schemaVersion 1, the cwd and the derived invocation, and leaves the rest of forwardedProps alone", () => {
    const body = genericInput("chat", { forwardedProps: { copilotkit: { anything: true } } });
    const input = validateRunInput(body, { allowedCwds: [os.tmpdir()], defaultCwd: workspace });
    expect(input.forwardedProps).toEqual({
      copilotkit: { anything: true },
      iacCode: { schemaVersion: 1, cwd: workspace, rosInvocationId: expect.stringMatching(/^agui-thread-/) },
    });
  });

  it("keeps a client's own iacCode, strict as ever", async () => {
    const own = runInput("chat", {}, { rosInvocationId: "ros-own" });
    await expectValidRun((await postRun(harness.service.url, own)).events);
    expect(sent().at(-1)!.params.message.metadata.iac_code).toMatchObject({ cwd: os.tmpdir(), rosInvocationId: "ros-own" });
    const partial = genericInput("chat", { forwardedProps: { iacCode: { schemaVersion: 1 } } });
    const { status } = await postRun(harness.service.url, partial);
    expect(status).toBe(400);
  });

  it("serves a stock HttpAgent that sends nothing of iac-code: it ends with the user's message and the answer", async () => {
    const asked = userMessage("chat");
    const agent = httpAgent(harness.service.url, { messages: [asked] });
    const run = await runHttpAgent(agent);
    expect(run.error).toBeUndefined();
    await expectValidRun(run.events);
    expect(run.messages[0]).toEqual(asked);
    expect(transcript(run.messages)).toEqual([
      { role: "user", content: "chat" },
      { role: "assistant", content: expect.stringContaining(CHAT_OPENING) },
    ]);
    expect(run.newMessages.map((message: Message) => message.role)).toEqual(["assistant"]);
  });
});

describe("IAC_CODE_AGUI_CLIENT_TOOLS=ignore", () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness({}, { clientTools: "ignore" });
  });
  afterAll(() => harness.close());

  it("accepts declared client tools and does not offer them to the kernel", async () => {
    const before = harness.kernel.received.length;
    const { status, events } = await postRun(harness.service.url, runInput("chat", { tools: [frontendTool] }));
    expect(status).toBe(200);
    await expectValidRun(events);
    const calls = harness.kernel.received.slice(before);
    expect(calls.map((call) => call.method)).toContain("SendStreamingMessage");
    expect(JSON.stringify(calls.map((call) => call.params))).not.toContain(frontendTool.name);
  });

  it("still refuses tools that are not tools, naming `tools`", async () => {
    for (const tools of [[{ description: "no name" }], "showWeather", [{ name: 42 }]]) {
      const { status, json } = await postRun(harness.service.url, runInput("chat", { tools }));
      expect(status).toBe(400);
      expect((json as { error: { detail: string } }).error.detail).toMatch(/\btools\b/);
    }
  });
});

describe("the two settings", () => {
  const root = realpathSync(mkdtempSync(path.join(os.tmpdir(), "agui-settings-")));
  const env = (more: Record<string, string>) => ({ IAC_CODE_AGUI_ALLOWED_CWDS: root, ...more });

  it("are off unless set", () => {
    const config = loadConfig([], env({}));
    expect(config.defaultCwd).toBeUndefined();
    expect(config.clientTools).toBeUndefined();
  });

  it("are read from the environment and from --default-cwd and --client-tools", () => {
    expect(loadConfig([], env({ IAC_CODE_AGUI_DEFAULT_CWD: root, IAC_CODE_AGUI_CLIENT_TOOLS: "ignore" }))).toMatchObject({
      defaultCwd: root,
      clientTools: "ignore",
    });
    expect(loadConfig(["--default-cwd", root, "--client-tools=refuse"], env({}))).toMatchObject({
      defaultCwd: root,
      clientTools: "refuse",
    });
  });

  it("refuse to start with a default cwd that is not an existing directory inside an allowed root, or an unknown tools policy", () => {
    expect(() => loadConfig([], env({ IAC_CODE_AGUI_DEFAULT_CWD: path.join(root, "missing") }))).toThrow(ConfigError);
    expect(() => loadConfig([], env({ IAC_CODE_AGUI_DEFAULT_CWD: os.homedir() }))).toThrow(/IAC_CODE_AGUI_DEFAULT_CWD/);
    expect(() => loadConfig([], env({ IAC_CODE_AGUI_CLIENT_TOOLS: "allow" }))).toThrow(/IAC_CODE_AGUI_CLIENT_TOOLS/);
  });
});
