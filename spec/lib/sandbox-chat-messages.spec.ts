/**
 * The sandbox's chat pane shows the messages @ag-ui/client builds, not a
 * copy of its rules: for recorded runs of the demo kernel (a stock
 * `HttpAgent` against the real service), the pane's fold of the same events
 * ends with the agent's very `messages` and `pendingInterrupts`. Checked on
 * the source the bundle is made from and on the browser bundle itself, as
 * `scripts/bundle-sandbox.mjs` builds it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import type { Message } from "@ag-ui/core";
import { build } from "esbuild";
import { messagesOf } from "../../lib/http/sandbox-bundle/messages-of.js";
import { PROJECT_ROOT } from "../../lib/paths.js";
import { httpAgent, runHttpAgent, userMessage } from "../support/http-agent.js";
import { startHarness, uniqueId, type Harness } from "../support/service.js";

type MessagesOf = typeof messagesOf;

/** The browser bundle, built as the build builds it, into a folder of its own. */
async function bundled(dir: string): Promise<MessagesOf> {
  const outfile = path.join(dir, "agui-client.js");
  await build({
    entryPoints: [path.join(PROJECT_ROOT, "lib", "http", "sandbox-bundle", "messages-of.ts")],
    outfile,
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    define: { "process.env.NODE_ENV": '"production"' },
    logLevel: "silent",
  });
  return ((await import(pathToFileURL(outfile).href)) as { messagesOf: MessagesOf }).messagesOf;
}

describe("the chat pane's messages", () => {
  let harness: Harness;
  let dir: string;
  let folds: Array<[string, MessagesOf]>;
  beforeAll(async () => {
    harness = await startHarness();
    dir = mkdtempSync(path.join(os.tmpdir(), "sandbox-bundle-"));
    folds = [
      ["source", messagesOf],
      ["bundle", await bundled(dir)],
    ];
  });
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await harness.close();
  });

  const forwardedProps = (iacCode: Record<string, unknown> = {}) => ({
    iacCode: { schemaVersion: 1, rosInvocationId: "ros-1", cwd: os.tmpdir(), ...iacCode },
  });

  /** Runs `text` (and each answer) with a stock HttpAgent; each run's fold must end where the agent did. */
  async function expectSameAsHttpAgent(text: string, iacCode: Record<string, unknown> = {}, answers: unknown[] = []) {
    const agent = httpAgent(harness.service.url, { messages: [userMessage(text)] });
    const turns = [undefined, ...answers];
    for (const answer of turns) {
      const before = structuredClone(agent.messages) as Message[];
      const [interrupt] = agent.pendingInterrupts;
      const resume = answer === undefined ? undefined : [{ interruptId: interrupt!.id, status: "resolved" as const, payload: answer }];
      const run = await runHttpAgent(agent, {
        runId: uniqueId("run"),
        forwardedProps: forwardedProps(iacCode),
        ...(resume ? { resume } : {}),
      });
      expect(run.error).toBeUndefined();
      expect(run.events.length).toBeGreaterThan(2);
      for (const [name, fold] of folds) {
        const chat = await fold(run.events, before);
        expect({ name, ...chat }).toEqual({ name, messages: agent.messages, pendingInterrupts: agent.pendingInterrupts });
      }
    }
    return agent;
  }

  it("reasoning-tools: thinking, tool calls with their results, the answer", async () => {
    const agent = await expectSameAsHttpAgent("reasoning-tools");
    expect(agent.messages.map((message) => message.role)).toEqual([
      "user",
      "reasoning",
      "assistant",
      "tool",
      "assistant",
      "tool",
      "assistant",
    ]);
  });

  it("permission: the interrupt pending, then the answered run", async () => {
    const agent = await expectSameAsHttpAgent("permission", {}, [{ decision: "allow_once" }]);
    expect(agent.messages.some((message) => message.role === "tool")).toBe(true);
  });

  it("failing-run: the text before the failure and the kernel's explanation", async () => {
    await expectSameAsHttpAgent("failing-run");
  });

  it("a pipeline run: each step's messages", async () => {
    const agent = await expectSameAsHttpAgent("pipeline", { runMode: "pipeline" });
    expect(agent.messages.filter((message) => message.role === "assistant").length).toBeGreaterThan(1);
  });

  const opening = [
    { type: "RUN_STARTED", threadId: "t", runId: "r" },
    { type: "TEXT_MESSAGE_START", messageId: "m", role: "assistant" },
    { type: "TEXT_MESSAGE_CONTENT", messageId: "m", delta: "half" },
  ];

  it("a stream cut short shows the text that came", async () => {
    for (const [name, fold] of folds) {
      expect({ name, ...(await fold(opening)) }).toEqual({
        name,
        messages: [{ id: "m", role: "assistant", content: "half" }],
        pendingInterrupts: [],
      });
    }
  });

  it("a stream the client refuses says why the client stopped", async () => {
    for (const [name, fold] of folds) {
      const chat = await fold([...opening, { type: "TEXT_MESSAGE_CONTENT", messageId: "elsewhere", delta: "never" }]);
      expect({ name, error: chat.error }).toEqual({
        name,
        error: expect.stringMatching(/No active text message found with ID 'elsewhere'/),
      });
    }
  });
});
