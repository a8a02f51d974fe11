/**
 * Streams in either encoding the service negotiates (SSE, AG-UI protobuf),
 * read as `@ag-ui/client` reads them: its HTTP event transform picks the
 * SSE or the protobuf parser by the response's Content-Type, as HttpAgent
 * does, so a framing mistake in either fails a test as it fails a client.
 */
import { HttpAgent, runHttpRequest, transformHttpEventStream, type HttpAgentConfig } from "@ag-ui/client";
import type { AGUIEvent, Message, RunAgentInput } from "@ag-ui/core";
import { Observable, lastValueFrom, toArray, type Subscribable } from "rxjs";
import { PROTOBUF_MEDIA_TYPE } from "../../lib/http/event-encoding.js";
import { quietCancelFetch } from "./http-agent.js";
import { uniqueId } from "./service.js";

/** Socket-sized: the protobuf parser copies what it holds on each frame, so one 20 MiB chunk would take minutes. */
const CHUNK_BYTES = 64 * 1024;

/** `bytes` as a body that arrives in pieces, as it does from a socket. */
function inPieces(bytes: Uint8Array): ReadableStream<Uint8Array> {
  let offset = 0;
  return new ReadableStream({
    pull(controller) {
      if (offset >= bytes.length) return controller.close();
      controller.enqueue(bytes.subarray(offset, offset + CHUNK_BYTES));
      offset += CHUNK_BYTES;
    },
  });
}

/** The events a stream's bytes decode to, by `@ag-ui/client`'s own parsers. */
export async function decodeEvents(body: Uint8Array | string, contentType: string): Promise<AGUIEvent[]> {
  const bytes = typeof body === "string" ? new TextEncoder().encode(body) : body;
  const replay = () => Promise.resolve(new Response(inPieces(bytes), { status: 200, headers: { "content-type": contentType } }));
  // @ag-ui/client bundles its own rxjs: adopt its Observable through the interop contract.
  const parsed = transformHttpEventStream(runHttpRequest(replay)) as unknown as Subscribable<AGUIEvent>;
  return lastValueFrom(new Observable<AGUIEvent>((subscriber) => parsed.subscribe(subscriber)).pipe(toArray()));
}

export interface StreamResult {
  status: number;
  contentType: string | null;
  vary: string | null;
  bytes: Uint8Array;
  /** The decoded events of a stream; empty for a JSON answer. */
  events: AGUIEvent[];
  json: unknown;
}

/** POSTs `body` with the given headers (an Accept, say) and reads the whole answer, whichever encoding it comes in. */
export async function postStream(url: string, body: unknown, headers: Record<string, string> = {}): Promise<StreamResult> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  const bytes = new Uint8Array(await response.arrayBuffer());
  const contentType = response.headers.get("content-type");
  const vary = response.headers.get("vary");
  const isStream = contentType === PROTOBUF_MEDIA_TYPE || contentType?.startsWith("text/event-stream");
  if (!isStream) {
    const text = new TextDecoder().decode(bytes);
    return { status: response.status, contentType, vary, bytes, events: [], json: text ? JSON.parse(text) : undefined };
  }
  return { status: response.status, contentType, vary, bytes, events: await decodeEvents(bytes, contentType!), json: undefined };
}

/**
 * The stock HttpAgent, asking for protobuf. HttpAgent itself always sends
 * `Accept: text/event-stream` (and reads whichever encoding comes back);
 * `requestInit` is its documented hook for the request it sends.
 */
export class ProtobufHttpAgent extends HttpAgent {
  /** The Content-Type of each answer: which encoding the service chose. */
  readonly contentTypes: Array<string | null> = [];

  constructor(config: HttpAgentConfig) {
    super(config);
    const send = this.fetch;
    this.fetch = async (url, init) => {
      const response = await send(url, init);
      this.contentTypes.push(response.headers.get("content-type"));
      return response;
    };
  }

  protected override requestInit(input: RunAgentInput): RequestInit {
    const init = super.requestInit(input);
    return { ...init, headers: { ...(init.headers as Record<string, string>), Accept: PROTOBUF_MEDIA_TYPE } };
  }
}

/** A ProtobufHttpAgent on `url`, on a thread of its own unless one is given, holding `messages`. */
export function protobufHttpAgent(url: string, options: { threadId?: string; messages?: Message[] } = {}): ProtobufHttpAgent {
  const agent = new ProtobufHttpAgent({ url, threadId: options.threadId ?? uniqueId("thread"), fetch: quietCancelFetch });
  agent.messages = structuredClone(options.messages ?? []);
  return agent;
}
