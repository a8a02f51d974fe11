/**
 * @ag-ui/client's stock HttpAgent, run against the service as a chat UI
 * runs it: the agent's own apply step builds the conversation, so what its
 * `messages` end up as is what a user sees.
 */
import {
  HttpAgent,
  runHttpRequest,
  transformHttpEventStream,
  type AbstractAgent,
  type HttpAgentConfig,
  type RunAgentInput,
  type RunAgentParameters,
} from "@ag-ui/client";
import type { AGUIEvent, Message } from "@ag-ui/core";
import { uniqueId } from "./service.js";

/** A user message as a chat UI makes one. */
export const userMessage = (text: string): Message => ({ id: uniqueId("msg"), role: "user", content: text });

/** An HttpAgent on `url`, on a thread of its own unless one is given, holding `messages`. */
export function httpAgent(url: string, options: { threadId?: string; messages?: Message[] } = {}): HttpAgent {
  const agent = new HttpAgent({ url, threadId: options.threadId ?? uniqueId("thread") });
  agent.messages = structuredClone(options.messages ?? []);
  return agent;
}

export interface HttpAgentRun {
  /** Every event the agent applied, in order. */
  events: AGUIEvent[];
  /** The agent's whole conversation after the run. */
  messages: Message[];
  /** The messages this run added. */
  newMessages: Message[];
  /** What the run threw, if it did (a refused request, a broken stream). */
  error?: unknown;
}

/** One `runAgent` call; a failure is returned, not thrown, so a test can look at what was applied before it. */
export async function runHttpAgent(agent: HttpAgent, parameters: RunAgentParameters = {}): Promise<HttpAgentRun> {
  const events: AGUIEvent[] = [];
  const subscriber = { onEvent: ({ event }: { event: unknown }) => void events.push(event as AGUIEvent) };
  try {
    const { newMessages } = await agent.runAgent(parameters, subscriber);
    return { events, messages: agent.messages, newMessages };
  } catch (error) {
    return { events, messages: agent.messages, newMessages: [], error };
  }
}

/** The parts of each message a user sees: role and text, tool calls with their arguments, tool results. */
export function transcript(messages: readonly Message[]): Array<Record<string, unknown>> {
  return messages.map((message) => {
    switch (message.role) {
      case "tool":
        return { role: "tool", toolCallId: message.toolCallId, content: message.content };
      case "activity":
        return { role: "activity", activityType: message.activityType };
      case "assistant": {
        const toolCalls = message.toolCalls?.map((call) => ({ id: call.id, name: call.function.name, arguments: call.function.arguments }));
        return { role: "assistant", content: message.content ?? "", ...(toolCalls?.length ? { toolCalls } : {}) };
      }
      default: {
        const { content } = message;
        const text =
          typeof content === "string"
            ? content
            : (content ?? []).map((part) => ("text" in part && typeof part.text === "string" ? part.text : "")).join("");
        return { role: message.role, content: text };
      }
    }
  });
}

/**
 * An HttpAgent whose `connect` posts to the service's thread attach route,
 * as CopilotKit's runtime agent posts to its own `/connect`: `connectAgent()`
 * then rebuilds a page's conversation and pending interrupts from the thread
 * id alone (the stock HttpAgent has no connect and does nothing there).
 */
export class ConnectingHttpAgent extends HttpAgent {
  constructor(
    config: HttpAgentConfig,
    readonly connectUrl: string,
  ) {
    super(config);
  }

  // The Observable of @ag-ui/client's own rxjs, as `run` returns it.
  protected override connect(input: RunAgentInput): ReturnType<HttpAgent["run"]> {
    return transformHttpEventStream(runHttpRequest(() => this.fetch(this.connectUrl, this.requestInit(input))));
  }
}

/** A page's agent after a reload: its thread, no messages, attaching through `connectUrl`. */
export function connectingAgent(url: string, connectUrl: string, options: { threadId: string }): ConnectingHttpAgent {
  return new ConnectingHttpAgent({ url, threadId: options.threadId }, connectUrl);
}

/** One `connectAgent` call; a failure is returned, not thrown (see `runHttpAgent`). */
export async function connectHttpAgent(agent: AbstractAgent, parameters: RunAgentParameters = {}): Promise<HttpAgentRun> {
  const events: AGUIEvent[] = [];
  const subscriber = { onEvent: ({ event }: { event: unknown }) => void events.push(event as AGUIEvent) };
  try {
    const { newMessages } = await agent.connectAgent(parameters, subscriber);
    return { events, messages: agent.messages, newMessages };
  } catch (error) {
    return { events, messages: agent.messages, newMessages: [], error };
  }
}
