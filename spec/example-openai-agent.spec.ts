/**
 * The example agent of `examples/openai-agent/` behind the real service,
 * driven by @ag-ui/client's stock HttpAgent as a chat UI drives it, against
 * a fake OpenAI-compatible endpoint on loopback that streams scripted
 * chunks: the model's text arrives as one assistant message, its
 * `ask_user` call becomes an interrupt with the question, the answer goes
 * back to the model as the tool's result and the answer after it streams
 * into the chat; a later turn of the thread carries the conversation so far.
 */
import { mkdtempSync, realpathSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { EventType, type AGUIEvent } from "@ag-ui/core";
import { startOpenAiAgent, type OpenAiAgent } from "../examples/openai-agent/agent.js";
import type { ChatMessage } from "../examples/openai-agent/chat-completions.js";
import { startService, type RunningService } from "../lib/server.js";
import { expectValidRun } from "./support/agui.js";
import { httpAgent, runHttpAgent, transcript, userMessage } from "./support/http-agent.js";
import { testConfig, uniqueId } from "./support/service.js";

const API_KEY = "sk-test-key";
const MODEL = "test-model";
const QUESTION = "Which city should the trip go to?";

/** What the fake endpoint was asked: the body and the authorization it came with. */
interface ChatRequest {
  authorization: string | undefined;
  body: { model: string; stream: boolean; messages: ChatMessage[]; tools?: Array<{ function: { name: string } }> };
}

/** One streamed chunk of a chat completion, as OpenAI sends it. */
const textChunk = (content: string) => ({ choices: [{ index: 0, delta: { content } }] });
const toolChunk = (piece: { id?: string; name?: string; arguments: string }) => ({
  choices: [
    {
      index: 0,
      delta: {
        tool_calls: [
          {
            index: 0,
            ...(piece.id ? { id: piece.id, type: "function" } : {}),
            function: { ...(piece.name ? { name: piece.name } : {}), arguments: piece.arguments },
          },
        ],
      },
    },
  ],
});

/** The model's script: what it streams for the conversation it is sent, by its last message. */
function scriptedAnswer(messages: ChatMessage[]): unknown[] {
  const last = messages.at(-1)!;
  if (last.role === "user" && last.content === "Plan a weekend trip for me")
    return [
      textChunk("Happy to plan it. "),
      textChunk("First, one thing."),
      toolChunk({ id: "call-ask-1", name: "ask_user", arguments: '{"question": "Which city' }),
      toolChunk({ arguments: ' should the trip go to?"}' }),
    ];
  if (last.role === "tool")
    return [textChunk(`${last.content} it is: `), textChunk("walk the West Lake on Saturday, "), textChunk("tea hills on Sunday.")];
  if (last.role === "user" && last.content === "Thanks!") return [textChunk("You're welcome. Enjoy Hangzhou!")];
  return [textChunk("I did not expect that.")];
}

/** A local OpenAI-compatible streaming endpoint: `POST /v1/chat/completions` answers the script as SSE, `[DONE]` last. */
async function startFakeChatEndpoint(): Promise<{ baseUrl: string; requests: ChatRequest[]; close(): Promise<void> }> {
  const requests: ChatRequest[] = [];
  const server = http.createServer((req, res) => {
    let text = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => (text += chunk));
    req.on("end", () => {
      if (req.method !== "POST" || req.url !== "/v1/chat/completions") return void res.writeHead(404).end();
      const body = JSON.parse(text) as ChatRequest["body"];
      requests.push({ authorization: req.headers.authorization, body });
      res.writeHead(200, { "content-type": "text/event-stream" });
      // CRLF line ends on purpose, as some servers send them, and each event in a write of its own.
      for (const chunk of scriptedAnswer(body.messages))
        res.write(`data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", ...(chunk as object) })}\r\n\r\n`);
      res.end("data: [DONE]\n\n");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe("the example OpenAI-compatible agent behind the service", () => {
  let endpoint: Awaited<ReturnType<typeof startFakeChatEndpoint>>;
  let agent: OpenAiAgent;
  let service: RunningService;

  beforeAll(async () => {
    endpoint = await startFakeChatEndpoint();
    agent = await startOpenAiAgent({ endpoint: { baseUrl: endpoint.baseUrl, apiKey: API_KEY, model: MODEL }, token: "agent-token" });
    // As docs/a2a-agents.md runs it: a default workspace for chat UIs that send no forwardedProps.iacCode.
    const defaultCwd = realpathSync(mkdtempSync(path.join(os.tmpdir(), "agui-openai-agent-")));
    service = await startService(testConfig({ a2aUrl: agent.url, a2aToken: "agent-token", defaultCwd, clientTools: "ignore" }));
  });
  afterAll(async () => {
    await service.close();
    await agent.close();
    await endpoint.close();
  });

  const run = async (chat: ReturnType<typeof httpAgent>, parameters: Parameters<typeof runHttpAgent>[1] = {}) => {
    const result = await runHttpAgent(chat, { runId: uniqueId("run"), ...parameters });
    expect(result.error).toBeUndefined();
    await expectValidRun(result.events);
    return result;
  };
  const lastEvent = (events: AGUIEvent[]) => events.at(-1) as { type: EventType; outcome?: { type: string } };

  it("streams the model's text, asks its ask_user question as an interrupt, and goes on with the answer", async () => {
    const chat = httpAgent(service.url, { messages: [userMessage("Plan a weekend trip for me")] });

    const asked = await run(chat);
    expect(lastEvent(asked.events)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "interrupt" } });
    // The text came in its chunks, one assistant message.
    const deltas = asked.events.filter((event) => event.type === EventType.TEXT_MESSAGE_CONTENT).map((event) => event.delta);
    expect(deltas.slice(0, 2)).toEqual(["Happy to plan it. ", "First, one thing."]);
    expect(transcript(chat.messages)).toEqual([
      { role: "user", content: "Plan a weekend trip for me" },
      { role: "assistant", content: "Happy to plan it. First, one thing." },
      { role: "assistant", content: QUESTION },
    ]);
    expect(chat.pendingInterrupts).toEqual([
      expect.objectContaining({
        reason: "input_required",
        message: QUESTION,
        metadata: expect.objectContaining({ kind: "a2a_input_required" }),
      }),
    ]);
    // What the endpoint was sent: the key, the model, a stream, the one tool.
    expect(endpoint.requests).toHaveLength(1);
    expect(endpoint.requests[0]).toMatchObject({
      authorization: `Bearer ${API_KEY}`,
      body: { model: MODEL, stream: true, messages: [{ role: "user", content: "Plan a weekend trip for me" }] },
    });
    expect(endpoint.requests[0]!.body.tools!.map((tool) => tool.function.name)).toEqual(["ask_user"]);

    const [interrupt] = chat.pendingInterrupts;
    const answered = await run(chat, { resume: [{ interruptId: interrupt!.id, status: "resolved", payload: { freeText: "Hangzhou" } }] });
    expect(lastEvent(answered.events)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });
    expect(chat.pendingInterrupts).toEqual([]);
    expect(transcript(chat.messages).slice(3)).toEqual([
      { role: "assistant", content: "Hangzhou it is: walk the West Lake on Saturday, tea hills on Sunday." },
    ]);
    // The answer went to the model as the ask_user call's result, after the call.
    expect(endpoint.requests[1]!.body.messages).toEqual([
      { role: "user", content: "Plan a weekend trip for me" },
      {
        role: "assistant",
        content: "Happy to plan it. First, one thing.",
        tool_calls: [{ id: "call-ask-1", type: "function", function: { name: "ask_user", arguments: `{"question": "${QUESTION}"}` } }],
      },
      { role: "tool", tool_call_id: "call-ask-1", content: "Hangzhou" },
    ]);

    // A later turn of the thread: the model is sent the whole conversation so far.
    chat.messages.push(userMessage("Thanks!"));
    const later = await run(chat);
    expect(lastEvent(later.events)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });
    expect(transcript(chat.messages).at(-1)).toEqual({ role: "assistant", content: "You're welcome. Enjoy Hangzhou!" });
    expect(endpoint.requests[2]!.body.messages.map((message) => message.role)).toEqual(["user", "assistant", "tool", "assistant", "user"]);
    expect(endpoint.requests[2]!.body.messages.at(-2)).toEqual({
      role: "assistant",
      content: "Hangzhou it is: walk the West Lake on Saturday, tea hills on Sunday.",
    });
  });

  it("a failing endpoint ends the run in RUN_ERROR with the endpoint's status, never the key", async () => {
    const failing = await startOpenAiAgent({ endpoint: { baseUrl: `${endpoint.baseUrl}/missing`, apiKey: API_KEY, model: MODEL } });
    const failingService = await startService(
      testConfig({ a2aUrl: failing.url, defaultCwd: realpathSync(os.tmpdir()), clientTools: "ignore" }),
    );
    try {
      const chat = httpAgent(failingService.url, { messages: [userMessage("Hello")] });
      const result = await runHttpAgent(chat, { runId: uniqueId("run") });
      await expectValidRun(result.events);
      const error = result.events.find((event) => event.type === EventType.RUN_ERROR) as { code?: string; message: string } | undefined;
      expect(error).toMatchObject({ code: "A2A_EXECUTION_FAILED" });
      expect(JSON.stringify(result.events)).toContain("HTTP 404");
      expect(JSON.stringify(result.events)).not.toContain(API_KEY);
    } finally {
      await failingService.close();
      await failing.close();
    }
  });
});
