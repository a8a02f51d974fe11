/**
 * A streaming call to an OpenAI-compatible chat endpoint
 * (`POST <base>/chat/completions` with `stream: true`): OpenAI itself, or
 * any server that copies its API (vLLM, Ollama, LM Studio, DashScope's
 * compatible mode, a gateway). The answer's text is handed over chunk by
 * chunk as it arrives; tool calls, which arrive in pieces too, are put
 * together and returned with the whole text at the end.
 *
 * Only `fetch` and a few lines of SSE reading: nothing to install.
 */

/** A message of the conversation, as the chat API takes it. */
export type ChatMessage =
  | { role: "system" | "user"; content: string }
  | { role: "assistant"; content: string | null; tool_calls?: ToolCall[] }
  | { role: "tool"; tool_call_id: string; content: string };

export interface ToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

/** A tool the model may call, in the API's JSON Schema form. */
export interface ToolDefinition {
  type: "function";
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

export interface ChatEndpoint {
  /** Up to and including `/v1`, e.g. `https://api.openai.com/v1` or `http://127.0.0.1:11434/v1`. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <key>`; a local server may need none. */
  apiKey?: string | undefined;
  model: string;
}

export interface ChatAnswer {
  text: string;
  toolCalls: ToolCall[];
}

/** The endpoint refused or broke off; `status` is the HTTP status when there was one. */
export class ChatEndpointError extends Error {
  override name = "ChatEndpointError";
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

/** One streamed completion: `onText` gets each piece of text as it comes; the whole answer is returned at the end. */
export async function streamChat(
  endpoint: ChatEndpoint,
  request: { messages: ChatMessage[]; tools?: ToolDefinition[]; signal?: AbortSignal },
  onText: (delta: string) => void,
): Promise<ChatAnswer> {
  const response = await fetch(`${endpoint.baseUrl.replace(/\/+$/, "")}/chat/completions`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "text/event-stream",
      ...(endpoint.apiKey ? { authorization: `Bearer ${endpoint.apiKey}` } : {}),
    },
    body: JSON.stringify({
      model: endpoint.model,
      messages: request.messages,
      stream: true,
      ...(request.tools?.length ? { tools: request.tools } : {}),
    }),
    ...(request.signal ? { signal: request.signal } : {}),
  });
  if (!response.ok || response.body === null) {
    // The body may say why (a wrong model name, a quota); it never holds the key.
    const detail = (await response.text().catch(() => "")).slice(0, 500);
    throw new ChatEndpointError(`the chat endpoint answered HTTP ${response.status}${detail ? `: ${detail}` : ""}`, response.status);
  }

  let text = "";
  const calls = new Map<number, ToolCall>();
  for await (const data of sseData(response.body)) {
    if (data === "[DONE]") break;
    let chunk: CompletionChunk;
    try {
      chunk = JSON.parse(data) as CompletionChunk;
    } catch {
      throw new ChatEndpointError("the chat endpoint sent an event that is not JSON");
    }
    if (chunk.error) throw new ChatEndpointError(`the chat endpoint failed: ${chunk.error.message ?? "no reason given"}`);
    const delta = chunk.choices?.[0]?.delta;
    if (typeof delta?.content === "string" && delta.content !== "") {
      text += delta.content;
      onText(delta.content);
    }
    for (const piece of delta?.tool_calls ?? []) {
      // The first piece of a call names it; the next ones add to its arguments.
      const call = calls.get(piece.index) ?? { id: "", type: "function" as const, function: { name: "", arguments: "" } };
      if (piece.id) call.id = piece.id;
      if (piece.function?.name) call.function.name += piece.function.name;
      if (piece.function?.arguments) call.function.arguments += piece.function.arguments;
      calls.set(piece.index, call);
    }
  }
  const toolCalls = [...calls.entries()].sort(([a], [b]) => a - b).map(([index, call]) => ({ ...call, id: call.id || `call-${index}` }));
  return { text, toolCalls };
}

/** The part of a streamed chunk this agent reads. */
interface CompletionChunk {
  choices?: Array<{
    delta?: {
      content?: string | null;
      tool_calls?: Array<{ index: number; id?: string; function?: { name?: string; arguments?: string } }>;
    };
  }>;
  error?: { message?: string };
}

/** The `data` of each server-sent event of `body` (several `data:` lines joined by newlines). */
async function* sseData(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffer = "";
  let data: string[] = [];
  for await (const bytes of body) {
    buffer += decoder.decode(bytes, { stream: true });
    let newline: number;
    while ((newline = buffer.search(/\r\n|\r|\n/)) >= 0) {
      // A "\r" at the end may be the first half of a "\r\n" still on its way.
      if (buffer[newline] === "\r" && newline === buffer.length - 1) break;
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + (buffer.startsWith("\r\n", newline) ? 2 : 1));
      if (line === "") {
        if (data.length > 0) yield data.join("\n");
        data = [];
      } else if (line.startsWith("data:")) {
        data.push(line.slice(line.startsWith("data: ") ? 6 : 5));
      }
      // Comments (": keep-alive"), `event:`, `id:` and `retry:` lines say nothing this agent needs.
    }
  }
  if (data.length > 0) yield data.join("\n");
}
