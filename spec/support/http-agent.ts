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

/**
 * `fetch` for every agent the specs run. @ag-ui/client reads a response
 * body with a reader, and when its subscriber goes (the run ended, failed
 * or was unsubscribed) cancels that reader and rethrows any failure but an
 * AbortError from a promise nobody holds (ag-ui-protocol/ag-ui#2510). The
 * reader of a stream that broke (undici's `TypeError: terminated`: the
 * service or a proxy closed the socket mid-stream, or a harness closed with
 * a run still streaming) fails its cancel with that same error, so every
 * broken stream also became an unhandled rejection, after the run had
 * already reported the break, often once its spec file had ended. The read
 * still fails as before; only the cancel after it is quiet.
 */
export const quietCancelFetch: typeof fetch = async (input, init) => {
  const response = await fetch(input, init);
  const body = response.body;
  if (body) {
    const getReader = body.getReader.bind(body) as () => ReadableStreamDefaultReader<Uint8Array>;
    body.getReader = (() => {
      const reader = getReader();
      const cancel = reader.cancel.bind(reader);
      reader.cancel = (reason?: unknown) => cancel(reason).catch(() => undefined);
      return reader;
    }) as typeof body.getReader;
  }
  return response;
};

/** An HttpAgent on `url`, on a thread of its own unless one is given, holding `messages`. */
export function httpAgent(url: string, options: { threadId?: string; messages?: Message[] } = {}): HttpAgent {
  const agent = new HttpAgent({ url, threadId: options.threadId ?? uniqueId("thread"), fetch: quietCancelFetch });
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
  return new ConnectingHttpAgent({ url, threadId: options.threadId, fetch: quietCancelFetch }, connectUrl);
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
