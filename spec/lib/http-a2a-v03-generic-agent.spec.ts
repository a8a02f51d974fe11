/**
 * The service in front of a stock A2A 0.3 agent that speaks as many
 * deployed agents do (`examples/fixtures-v03/cumulative-tools.jsonl` on the
 * 0.3 replay kernel): each status message repeats the whole text so far
 * under one `messageId`, and tools are called in data parts of the
 * convention other A2A bridges use. A chat client (HttpAgent, and a
 * CopilotKit app) must end with each text once and the tool call with its
 * result below it.
 */
import { mkdtempSync, realpathSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { EventType, type AGUIEvent } from "@ag-ui/core";
import { startReplayKernelV03, type ReplayKernelV03 } from "../../lib/kernel-v03/replay-kernel.js";
import { startService, type RunningService } from "../../lib/server.js";
import { expectValidRun } from "../support/agui.js";
import { say, startCopilotKit, transcriptOf, type CopilotKitApp } from "../support/copilotkit.js";
import { httpAgent, runHttpAgent, transcript, userMessage } from "../support/http-agent.js";
import { runInput, testConfig } from "../support/service.js";

const INTRO = "Let me check the weather in Hangzhou.";
const ANSWER = "It is 21 °C and clear in Hangzhou.";

describe("a stock A2A 0.3 agent that repeats its text in each status and calls tools in data parts", () => {
  let kernel: ReplayKernelV03;
  let service: RunningService;
  let app: CopilotKitApp;

  beforeAll(async () => {
    kernel = await startReplayKernelV03({ timeScale: 0 });
    // The two settings a default CopilotKit app needs (docs/clients.md, "Behind CopilotKit").
    const defaultCwd = realpathSync(mkdtempSync(path.join(os.tmpdir(), "agui-generic-agent-")));
    service = await startService(testConfig({ a2aUrl: kernel.url, defaultCwd, clientTools: "ignore" }));
    app = await startCopilotKit(service.url);
  });
  afterAll(async () => {
    await app.close();
    await service.close();
    await kernel.close();
  });

  it("HttpAgent ends with each text once, the tool call in the message that announced it and its result below it", async () => {
    const agent = httpAgent(service.url, { messages: [userMessage("cumulative-tools")] });
    const run = await runHttpAgent(agent, { forwardedProps: runInput("").forwardedProps });

    expect(run.error).toBeUndefined();
    await expectValidRun(run.events);
    const start = run.events.find((event) => event.type === EventType.TOOL_CALL_START) as { toolCallId: string } | undefined;
    expect(start).toBeDefined();
    const toolCallId = start!.toolCallId;
    expect(toolCallId).toMatch(/-weather$/);
    expect(transcript(run.messages)).toEqual([
      { role: "user", content: "cumulative-tools" },
      {
        role: "assistant",
        content: INTRO,
        toolCalls: [{ id: toolCallId, name: "get_weather", arguments: '{"city":"Hangzhou","unit":"celsius"}' }],
      },
      { role: "tool", toolCallId, content: '{"city":"Hangzhou","sky":"clear","temperatureC":21}' },
      { role: "assistant", content: ANSWER },
    ]);
    expect(run.events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });
  });

  it("sends only what is new of each status text, and the agent's own data part as iac-code.message-data.v1", async () => {
    const agent = httpAgent(service.url, { messages: [userMessage("cumulative-tools")] });
    const { events } = await runHttpAgent(agent, { forwardedProps: runInput("").forwardedProps });

    const deltas = events.flatMap((event: AGUIEvent) => (event.type === EventType.TEXT_MESSAGE_CONTENT ? [event.delta] : []));
    expect(deltas).toEqual(["Let me", " check the weather", " in Hangzhou.", "It is", " 21 °C", " and clear in Hangzhou."]);
    const data = events.filter((event) => event.type === EventType.CUSTOM && event.name === "iac-code.message-data.v1");
    expect(data).toEqual([
      expect.objectContaining({
        value: expect.objectContaining({
          schemaVersion: 1,
          messageId: expect.stringMatching(/-card$/),
          parts: [{ data: { card: "weather", city: "Hangzhou", temperatureC: 21, sky: "clear" }, mediaType: "application/json" }],
        }),
      }),
    ]);
  });

  it("a CopilotKit app ends with the same conversation", async () => {
    const client = app.client();
    say(client.agent, "cumulative-tools");
    await client.core.runAgent({ agent: client.agent });

    expect(client.errors).toEqual([]);
    const [run] = app.serviceRuns(client.agent.threadId);
    await expectValidRun(run!);
    const start = run!.find((event) => event.type === EventType.TOOL_CALL_START) as unknown as { toolCallId: string };
    const { toolCallId } = start;
    expect(transcriptOf(client.agent.messages)).toEqual([
      { role: "user", content: "cumulative-tools" },
      { role: "assistant", content: INTRO, toolCalls: ["get_weather"] },
      { role: "tool", content: '{"city":"Hangzhou","sky":"clear","temperatureC":21}', toolCallId },
      { role: "assistant", content: ANSWER },
    ]);
  });
});
