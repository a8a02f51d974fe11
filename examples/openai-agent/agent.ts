/**
 * An A2A 1.0 agent (on `@a2a-js/sdk`) that answers with a model behind any
 * OpenAI-compatible chat endpoint, so a chat UI gets real model text through
 * the AG-UI service with no iac-code kernel: `main.ts` runs it.
 *
 * - Each turn streams the model's answer as it comes: one status message
 *   per chunk, all under the answer's message id (the service shows them
 *   as one assistant message, `TEXT_MESSAGE_*`).
 * - The model is offered one tool, `ask_user`. When it calls it, the task
 *   stops in `input-required` with the question as its message (an
 *   interrupt in the chat, answered in free text); the answer, sent to the
 *   same task, is the tool's result, and the model goes on from there.
 * - The conversation so far is kept per A2A context, which the service
 *   keeps per AG-UI thread, so later turns of a thread remember the earlier
 *   ones. It lives in memory: a restart forgets it.
 *
 * Tool calls the model makes to tools it was not offered are answered with
 * a short refusal and the model asked again, a few rounds at most.
 */
import { randomUUID, timingSafeEqual } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { AGENT_CARD_PATH, AgentCard, Task, TaskStatusUpdateEvent, type Message } from "@a2a-js/sdk";
import {
  AgentEvent,
  DefaultRequestHandler,
  InMemoryTaskStore,
  type AgentExecutor,
  type ExecutionEventBus,
  type RequestContext,
} from "@a2a-js/sdk/server";
import { UserBuilder, agentCardHandler, jsonRpcHandler } from "@a2a-js/sdk/server/express";
import express, { type RequestHandler } from "express";
import { streamChat, type ChatEndpoint, type ChatMessage, type ToolCall, type ToolDefinition } from "./chat-completions.js";

/** The tool through which the model asks the user something: the `input-required` of A2A. */
export const ASK_USER: ToolDefinition = {
  type: "function",
  function: {
    name: "ask_user",
    description:
      "Ask the user a question and wait for the answer, when you need something only the user can tell you. " +
      "Ask one question at a time; the answer comes back as this tool's result.",
    parameters: {
      type: "object",
      properties: { question: { type: "string", description: "The question, as the user will read it." } },
      required: ["question"],
    },
  },
};

/** Model calls per turn: a model that keeps calling tools it does not have is stopped. */
const MAX_ROUNDS = 4;
/** Conversations kept; the oldest is forgotten past this many. */
const MAX_CONVERSATIONS = 1000;

export interface OpenAiAgentOptions {
  endpoint: ChatEndpoint;
  /** A system prompt put before every conversation. */
  systemPrompt?: string | undefined;
  /** Required as `Authorization: Bearer <token>` on every call, when set (the service's `IAC_CODE_AGUI_A2A_TOKEN`). */
  token?: string | undefined;
  host?: string;
  /** 0 (the default) picks a free port. */
  port?: number;
}

export interface OpenAiAgent {
  /** The JSON-RPC URL, for `IAC_CODE_AGUI_A2A_URL`. */
  url: string;
  close(): Promise<void>;
}

type State = "TASK_STATE_WORKING" | "TASK_STATE_INPUT_REQUIRED" | "TASK_STATE_COMPLETED" | "TASK_STATE_FAILED" | "TASK_STATE_CANCELED";

class ChatExecutor implements AgentExecutor {
  readonly #options: OpenAiAgentOptions;
  /** The conversation of each context, oldest first (a Map keeps insertion order). */
  readonly #conversations = new Map<string, ChatMessage[]>();
  /** The `ask_user` calls each parked task waits to answer with the user's next message. */
  readonly #questions = new Map<string, ToolCall[]>();
  readonly #running = new Map<string, AbortController>();
  readonly #contexts = new Map<string, string>();

  constructor(options: OpenAiAgentOptions) {
    this.#options = options;
  }

  execute = async (ctx: RequestContext, bus: ExecutionEventBus): Promise<void> => {
    const { taskId, contextId } = ctx;
    this.#contexts.set(taskId, contextId);
    const status = (state: State, text?: string, messageId: string = randomUUID()) =>
      bus.publish(AgentEvent.statusUpdate(statusEvent(taskId, contextId, state, text, messageId)));
    // The SDK wants a Task first on every turn, the follow-up of a parked task's too.
    bus.publish(AgentEvent.task(ctx.task ?? Task.fromJSON({ id: taskId, contextId, status: { state: "TASK_STATE_SUBMITTED" } })));

    const conversation = this.#conversation(contextId);
    const said = textOf(ctx.userMessage);
    const questions = this.#questions.get(taskId);
    this.#questions.delete(taskId);
    if (questions === undefined) conversation.push({ role: "user", content: said });
    else
      questions.forEach((call, index) =>
        conversation.push({ role: "tool", tool_call_id: call.id, content: index === 0 ? said : "Ask one question at a time." }),
      );
    status("TASK_STATE_WORKING");

    const abort = new AbortController();
    this.#running.set(taskId, abort);
    try {
      for (let round = 0; round < MAX_ROUNDS; round++) {
        const messageId = randomUUID();
        const answer = await streamChat(
          this.#options.endpoint,
          { messages: this.#withSystemPrompt(conversation), tools: [ASK_USER], signal: abort.signal },
          (delta) => status("TASK_STATE_WORKING", delta, messageId),
        );
        conversation.push({
          role: "assistant",
          content: answer.text || null,
          ...(answer.toolCalls.length ? { tool_calls: answer.toolCalls } : {}),
        });
        if (answer.toolCalls.length === 0) return status("TASK_STATE_COMPLETED");
        const asks = answer.toolCalls.filter((call) => call.function.name === ASK_USER.function.name);
        for (const call of answer.toolCalls.filter((call) => !asks.includes(call)))
          conversation.push({ role: "tool", tool_call_id: call.id, content: `There is no tool named ${call.function.name}.` });
        if (asks.length > 0) {
          this.#questions.set(taskId, asks);
          return status("TASK_STATE_INPUT_REQUIRED", questionOf(asks[0]!));
        }
      }
      status("TASK_STATE_FAILED", `The model kept calling tools this agent does not have (${MAX_ROUNDS} rounds); the turn was stopped.`);
    } catch (error) {
      // A cancel aborted the call; cancelTask tells the task so.
      if (abort.signal.aborted) return;
      status("TASK_STATE_FAILED", `The model could not answer: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      this.#running.delete(taskId);
    }
  };

  /** Stops a turn under way, or gives up a question, and tells the task it was cancelled. */
  cancelTask = async (taskId: string, bus: ExecutionEventBus): Promise<void> => {
    this.#running.get(taskId)?.abort();
    this.#questions.delete(taskId);
    bus.publish(AgentEvent.statusUpdate(statusEvent(taskId, this.#contexts.get(taskId) ?? "", "TASK_STATE_CANCELED")));
  };

  #conversation(contextId: string): ChatMessage[] {
    let conversation = this.#conversations.get(contextId);
    if (conversation === undefined) {
      conversation = [];
      if (this.#conversations.size >= MAX_CONVERSATIONS) this.#conversations.delete(this.#conversations.keys().next().value!);
    } else {
      // Taken out and put back: the most recently used is the last to be forgotten.
      this.#conversations.delete(contextId);
    }
    this.#conversations.set(contextId, conversation);
    return conversation;
  }

  #withSystemPrompt(conversation: ChatMessage[]): ChatMessage[] {
    const { systemPrompt } = this.#options;
    return systemPrompt ? [{ role: "system", content: systemPrompt }, ...conversation] : conversation;
  }
}

function statusEvent(taskId: string, contextId: string, state: State, text?: string, messageId: string = randomUUID()) {
  const message = text === undefined ? undefined : { messageId, role: "ROLE_AGENT", taskId, contextId, parts: [{ text }] };
  return TaskStatusUpdateEvent.fromJSON({
    taskId,
    contextId,
    status: { state, timestamp: new Date().toISOString(), ...(message ? { message } : {}) },
  });
}

/** The text parts of the user's message, joined. */
function textOf(message: Message): string {
  return message.parts
    .map((part) => (part.content?.$case === "text" ? part.content.value : ""))
    .join("")
    .trim();
}

/** What `ask_user` asks; its raw arguments when the model sent no readable question. */
function questionOf(call: ToolCall): string {
  try {
    const { question } = JSON.parse(call.function.arguments) as { question?: unknown };
    if (typeof question === "string" && question.trim() !== "") return question;
  } catch {
    // Shown as sent below.
  }
  return call.function.arguments || "The agent needs an answer to go on.";
}

/** Starts the agent on `host:port` (loopback, a free port by default). */
export async function startOpenAiAgent(options: OpenAiAgentOptions): Promise<OpenAiAgent> {
  const card = AgentCard.fromJSON({
    name: "OpenAI-compatible chat agent",
    description: `Answers with ${options.endpoint.model} through an OpenAI-compatible chat endpoint.`,
    version: "1.0.0",
    // The URL is known once the port is bound; set after listen.
    supportedInterfaces: [{ url: "http://127.0.0.1/", protocolBinding: "JSONRPC", protocolVersion: "1.0" }],
    capabilities: { streaming: true },
    defaultInputModes: ["text/plain"],
    defaultOutputModes: ["text/plain"],
    skills: [{ id: "chat", name: "Chat", description: "Answers in the conversation; may ask a question back.", tags: ["chat"] }],
  });
  const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), new ChatExecutor(options));

  const app = express();
  app.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: handler }));
  app.use(bearerToken(options.token), jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));

  const server = http.createServer(app);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => resolve());
  });
  const { address, port } = server.address() as AddressInfo;
  const url = `http://${address.includes(":") ? `[${address}]` : address}:${port}/`;
  card.supportedInterfaces[0]!.url = url;
  return {
    url,
    close: async () => {
      // A stream of a task parked on a question stays open; it must not hold the close.
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}

/** Refuses a call without the token (compared in constant time); lets everything through when there is none. */
function bearerToken(token: string | undefined): RequestHandler {
  if (!token) return (_req, _res, next) => next();
  const expected = Buffer.from(`Bearer ${token}`);
  return (req, res, next) => {
    const given = Buffer.from(req.header("authorization") ?? "");
    if (given.length === expected.length && timingSafeEqual(given, expected)) return next();
    res.status(401).set("WWW-Authenticate", "Bearer").json({ error: "a valid bearer token is required" });
  };
}
