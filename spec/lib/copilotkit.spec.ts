/**
 * The service behind CopilotKit (issue 12): a real CopilotRuntime with the
 * service registered as an AG-UI HttpAgent, driven by CopilotKit's headless
 * client core, each flow asserted on the messages the app ends with, as a
 * chat UI shows them. The service runs with the two generic-client settings
 * a default CopilotKit app needs (IAC_CODE_AGUI_DEFAULT_CWD,
 * IAC_CODE_AGUI_CLIENT_TOOLS=ignore); what CopilotKit does by itself is in
 * docs/clients.md ("Behind CopilotKit").
 */
import { mkdtempSync, realpathSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { FileThreadStore } from "../../lib/state/file-thread-store.js";
import type { ThreadLease, ThreadStore } from "../../lib/state/thread-store.js";
import { expectValidRun } from "../support/agui.js";
import { interruptHandling, say, startCopilotKit, transcriptOf, type CopilotKitApp } from "../support/copilotkit.js";
import { startHarness, waitFor, type Harness } from "../support/service.js";

const CHAT_OPENING = "Hi! This is the iac-code-agui demo kernel";
/** `{city}`, as the Standard JSON Schema CopilotKit reads a frontend action's parameters through (what zod gives an app). */
const cityParameters = {
  "~standard": {
    version: 1 as const,
    vendor: "spec",
    validate: (value: unknown) => ({ value: value as { city: string } }),
    jsonSchema: { input: () => ({ type: "object", properties: { city: { type: "string" } }, required: ["city"] }) },
  },
};
/** A frontend action, as every CopilotKit app that renders something in the page declares one. */
const showWeatherCard = {
  name: "showWeatherCard",
  description: "Shows a weather card in the page",
  parameters: cityParameters,
  handler: async ({ city }: { city: string }) => `shown for ${city}`,
};

type SendCall = { params: { message: { metadata: { iac_code: Record<string, unknown> } } } };
const workspace = () => realpathSync(mkdtempSync(path.join(os.tmpdir(), "agui-copilotkit-")));

describe("CopilotKit in front of the service", () => {
  let harness: Harness;
  let app: CopilotKitApp;
  let cwd: string;
  const sent = () => harness.kernel.received.filter((call) => call.method === "SendStreamingMessage") as unknown as SendCall[];
  /** Every stream the service sent the runtime on this thread passes the stream checks. */
  const expectValidServiceRuns = async (threadId: string, count: number) => {
    const runs = app.serviceRuns(threadId);
    expect(runs).toHaveLength(count);
    for (const events of runs) await expectValidRun(events);
  };

  beforeAll(async () => {
    cwd = workspace();
    harness = await startHarness({}, { defaultCwd: cwd, clientTools: "ignore" });
    app = await startCopilotKit(harness.service.url);
  });
  afterAll(async () => {
    await app.close();
    await harness.close();
  });

  it("a chat round trip: the app ends with the user's message and the answer, its frontend action never offered to the kernel", async () => {
    const client = app.client({ tools: [showWeatherCard] });
    say(client.agent, "chat");
    const { newMessages } = await client.core.runAgent({ agent: client.agent });

    expect(client.errors).toEqual([]);
    expect(transcriptOf(client.agent.messages)).toEqual([
      { role: "user", content: "chat" },
      { role: "assistant", content: expect.stringContaining(CHAT_OPENING) },
    ]);
    expect(newMessages.map((message) => message.role)).toEqual(["assistant"]);
    await expectValidServiceRuns(client.agent.threadId, 1);
    const { iac_code } = sent().at(-1)!.params.message.metadata;
    expect(iac_code).toMatchObject({ cwd, rosInvocationId: expect.stringMatching(/^agui-thread-/) });
    expect(JSON.stringify(sent().at(-1))).not.toContain(showWeatherCard.name);
  });

  it("a permission answered through CopilotKit's interrupt handling: it resumes under the interrupted run's id, and the deployment goes on", async () => {
    const client = app.client();
    const interrupts = interruptHandling(client);
    say(client.agent, "permission");
    await client.core.runAgent({ agent: client.agent });

    expect(client.errors).toEqual([]);
    const [permission] = interrupts.pending;
    expect(permission).toMatchObject({
      reason: "tool_call",
      toolCallId: "toolu_deploy_1",
      message: expect.stringContaining("ros_deploy_stack"),
    });
    expect(transcriptOf(client.agent.messages)).toEqual([
      { role: "user", content: "permission" },
      { role: "assistant", content: expect.stringContaining("I'll deploy the stack"), toolCalls: ["ros_deploy_stack"] },
    ]);

    expect(await interrupts.answer(permission!.id, { payload: { decision: "allow_once" } })).toBe("resumed");
    interrupts.stop();
    expect(client.errors).toEqual([]);
    expect(transcriptOf(client.agent.messages)).toEqual([
      { role: "user", content: "permission" },
      { role: "assistant", content: expect.stringContaining("I'll deploy the stack"), toolCalls: ["ros_deploy_stack"] },
      // CopilotKit's own answer to the tool call the interrupt stands for.
      { role: "tool", toolCallId: "toolu_deploy_1", content: JSON.stringify({ decision: "allow_once" }) },
      { role: "assistant", content: expect.stringContaining("The stack `demo-vpc-ecs` is deployed") },
    ]);
    const [paused, resumed] = app.serviceRuns(client.agent.threadId).map((events) => events[0] as { type: string; runId?: string });
    expect(resumed).toEqual(expect.objectContaining({ type: "RUN_STARTED", runId: paused!.runId }));
    await expectValidServiceRuns(client.agent.threadId, 2);
  });

  it("a question answered through CopilotKit's interrupt handling: the chosen option reaches the kernel", async () => {
    const client = app.client();
    const interrupts = interruptHandling(client);
    say(client.agent, "question");
    await client.core.runAgent({ agent: client.agent });
    const [question] = interrupts.pending;
    expect(question).toMatchObject({ reason: "input_required", metadata: expect.objectContaining({ kind: "ask_user_question" }) });

    expect(await interrupts.answer(question!.id, { payload: { selectedId: "cn-hangzhou" } })).toBe("resumed");
    interrupts.stop();
    expect(client.errors).toEqual([]);
    const transcript = transcriptOf(client.agent.messages);
    expect(transcript[0]).toEqual({ role: "user", content: "question" });
    expect(transcript.at(-1)).toEqual({ role: "assistant", content: expect.stringContaining("Deploying to Hangzhou (cn-hangzhou).") });
    // The question's tool call is answered by the service (an input_required interrupt gets no tool message from CopilotKit).
    expect(transcript).toContainEqual({ role: "tool", toolCallId: question!.toolCallId, content: expect.stringContaining("Hangzhou") });
    await expectValidServiceRuns(client.agent.threadId, 2);
  });

  it("a question cancelled through CopilotKit's interrupt handling: the run finishes, the question is answered as cancelled, and the next message runs", async () => {
    const client = app.client();
    const interrupts = interruptHandling(client);
    say(client.agent, "question");
    await client.core.runAgent({ agent: client.agent });
    const [question] = interrupts.pending;
    expect(question).toBeDefined();

    expect(await interrupts.answer(question!.id, { cancel: true })).toBe("resumed");
    expect(client.errors).toEqual([]);
    expect(interrupts.pending).toEqual([]);
    const [, cancelled] = app.serviceRuns(client.agent.threadId);
    expect(cancelled!.at(-1)).toMatchObject({ type: "RUN_FINISHED", outcome: { type: "success" }, result: { cancelled: true } });
    expect(transcriptOf(client.agent.messages)).toContainEqual({
      role: "tool",
      toolCallId: question!.toolCallId,
      content: "The execution was cancelled by the interrupt response.",
    });

    say(client.agent, "chat");
    await client.core.runAgent({ agent: client.agent });
    interrupts.stop();
    expect(client.errors).toEqual([]);
    expect(transcriptOf(client.agent.messages).at(-1)).toEqual({ role: "assistant", content: expect.stringContaining(CHAT_OPENING) });
    await expectValidServiceRuns(client.agent.threadId, 3);
  });

  it("a pipeline run, its runMode sent as the app's properties: the app ends with each step's and each candidate's messages", async () => {
    const client = app.client({ properties: { iacCode: { schemaVersion: 1, rosInvocationId: "ros-pipeline", cwd, runMode: "pipeline" } } });
    say(client.agent, "pipeline");
    await client.core.runAgent({ agent: client.agent });

    expect(client.errors).toEqual([]);
    expect(sent().at(-1)!.params.message.metadata.iac_code).toMatchObject({ run_mode: "pipeline", rosInvocationId: "ros-pipeline" });
    expect(transcriptOf(client.agent.messages)).toEqual([
      { role: "user", content: "pipeline" },
      { role: "reasoning", content: expect.stringContaining("The user wants a web tier on ECS") },
      { role: "assistant", toolCalls: ["Read"] },
      { role: "tool", toolCallId: "toolu_plan_read_1", content: expect.stringContaining("# Web tier") },
      { role: "assistant", content: expect.stringContaining("The requirements ask for two ECS instances") },
      { role: "assistant", content: expect.stringContaining("Candidate A") },
      { role: "assistant", content: expect.stringContaining("Candidate B") },
    ]);
    await expectValidServiceRuns(client.agent.threadId, 1);
  });
});

describe("a default CopilotKit app in front of the strict service", () => {
  let harness: Harness;
  let app: CopilotKitApp;
  beforeAll(async () => {
    harness = await startHarness();
    app = await startCopilotKit(harness.service.url);
  });
  afterAll(async () => {
    await app.close();
    await harness.close();
  });

  it.each([
    ["declares a frontend action", [showWeatherCard], /\btools\b/],
    ["declares none", [], /Invalid iac-code forwarded properties/],
  ])("is refused when it %s: CopilotKit reports the 400 and the chat keeps the user's message alone", async (_name, tools, said) => {
    const client = app.client({ tools });
    say(client.agent, "chat");
    await client.core.runAgent({ agent: client.agent });
    expect(client.errors.join("\n")).toMatch(/HTTP 400/);
    expect(client.errors.join("\n")).toMatch(said);
    expect(transcriptOf(client.agent.messages)).toEqual([{ role: "user", content: "chat" }]);
    expect(harness.kernel.received.filter((call) => call.method === "SendStreamingMessage")).toEqual([]);
  });
});

/** The real store, telling when a thread's lease goes back: when the service is done with a run. */
class LeaseWatch implements ThreadStore {
  readonly #store: FileThreadStore;
  readonly #waiting = new Map<string, Array<() => void>>();
  constructor(stateDir: string) {
    this.#store = new FileThreadStore({ stateDir });
  }
  load = (threadId: string) => this.#store.load(threadId);
  save: ThreadStore["save"] = (state) => this.#store.save(state);
  async tryAcquire(threadId: string): Promise<ThreadLease | undefined> {
    const lease = await this.#store.tryAcquire(threadId);
    if (!lease) return undefined;
    return {
      threadId,
      token: lease.token,
      release: async () => {
        await lease.release();
        for (const resolve of this.#waiting.get(threadId)?.splice(0) ?? []) resolve();
      },
    };
  }
  /** The next release of the thread's lease. */
  released(threadId: string): Promise<void> {
    return new Promise((resolve) => this.#waiting.set(threadId, [...(this.#waiting.get(threadId) ?? []), resolve]));
  }
}

describe("stop and resend through CopilotKit", () => {
  let harness: Harness;
  let app: CopilotKitApp;
  let leases: LeaseWatch;
  beforeAll(async () => {
    const stateDir = mkdtempSync(path.join(os.tmpdir(), "agui-state-"));
    leases = new LeaseWatch(stateDir);
    // Real time: `slow-chat` takes about three seconds, time enough to stop it mid-answer.
    harness = await startHarness({ timeScale: 1 }, { stateDir, defaultCwd: workspace(), clientTools: "ignore" }, { store: leases });
    app = await startCopilotKit(harness.service.url);
  });
  afterAll(async () => {
    await app.close();
    await harness.close();
  });

  it("stopping mid-answer keeps what came and cancels the kernel's task; the next message is answered", async () => {
    const client = app.client();
    const { core, agent } = client;
    say(agent, "slow-chat");
    const runErrors: unknown[] = [];
    const stopOnFirstWords = agent.subscribe({
      onTextMessageContentEvent: () => core.stopAgent({ agent }),
      onRunErrorEvent: ({ event }) => void runErrors.push(event),
    });
    const freed = leases.released(agent.threadId);
    await core.runAgent({ agent });
    stopOnFirstWords.unsubscribe();

    // The runtime ends a stopped run itself, with a RUN_ERROR of its own that CopilotKit does not report as an error.
    expect(runErrors).toEqual([expect.objectContaining({ code: "abort" })]);
    expect(client.errors).toEqual([]);
    const stopped = transcriptOf(agent.messages);
    expect(stopped).toEqual([
      { role: "user", content: "slow-chat" },
      { role: "assistant", content: expect.any(String) },
    ]);
    expect(stopped[1]!.content!.length).toBeGreaterThan(0);
    await freed;
    await waitFor(() => harness.kernel.received.some((call) => call.method === "CancelTask"));

    say(agent, "chat");
    await core.runAgent({ agent });
    expect(client.errors).toEqual([]);
    expect(transcriptOf(agent.messages)).toEqual([
      { role: "user", content: "slow-chat" },
      { role: "assistant", content: stopped[1]!.content },
      { role: "user", content: "chat" },
      { role: "assistant", content: expect.stringContaining(CHAT_OPENING) },
    ]);
    const [, resent] = app.serviceRuns(agent.threadId);
    await expectValidRun(resent!);
  });
});
