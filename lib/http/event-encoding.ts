/**
 * How a stream's events go on the wire, chosen per request from its
 * `Accept` (runs on `POST /` and observer streams alike):
 *
 * - SSE, the default: one `data: <json>` record per event, LF-only, and a
 *   quiet stream's heartbeat as the comment `: heartbeat` (R-SSE).
 * - AG-UI's protobuf (`application/vnd.ag-ui.event+proto`), framed by the
 *   official `@ag-ui/encoder`: each event one protobuf message behind its
 *   length as a 4-byte big-endian integer, which `@ag-ui/client`'s
 *   HttpAgent reads when the response's Content-Type is exactly that type.
 *
 * A protobuf stream has no heartbeat: its frames carry events only, and an
 * empty frame or any other filler is a decoding error to the client (the
 * SDK's parser fails the run on it). A quiet protobuf stream is thus silent
 * on the wire; a client behind a proxy that cuts idle connections asks for
 * SSE. What a client takes is still watched the same way (see `sse-sink.ts`).
 */
import { EventType, type AGUIEvent } from "@ag-ui/core";
import { AGUI_MEDIA_TYPE, EventEncoder } from "@ag-ui/encoder";
import type { Request } from "express";

export const SSE_MEDIA_TYPE = "text/event-stream";
export { AGUI_MEDIA_TYPE as PROTOBUF_MEDIA_TYPE };

export interface EventEncoding {
  /** The response's headers, its Content-Type among them. */
  readonly headers: Readonly<Record<string, string>>;
  /** One event as it goes on the wire. Throws for a value it cannot encode (the sink ends the run then). */
  encode(event: AGUIEvent): string | Uint8Array;
  /** What a heartbeat writes, or undefined where the encoding can carry none. */
  readonly heartbeat: string | Uint8Array | undefined;
}

const STREAM_HEADERS = {
  "Cache-Control": "no-cache, no-transform",
  Connection: "keep-alive",
  // Reverse proxies (nginx) would otherwise buffer the stream.
  "X-Accel-Buffering": "no",
} as const;

export const encodeSseEvent = (event: AGUIEvent): string =>
  isPlainTextDelta(event) ? textDeltaRecord(event) : `data: ${JSON.stringify(event)}\n\n`;

/**
 * The text delta is most of what a stream sends, and JSON.stringify's walk
 * of its object (each key quoted, each value looked at for `toJSON`, the
 * thirteen-digit timestamp formatted as a double) was 0.5 µs of the ~7 a
 * delta costs the service (`npm run bench`, beside the peer). So a delta
 * of exactly these fields, in this order, is written from its parts: the
 * same bytes JSON.stringify would write (its strings still quoted and
 * escaped by JSON.stringify), in about a third of the time. Any other
 * shape (another order, a field more, `rawEvent`) goes the general way.
 */
const TEXT_DELTA_KEYS = ["type", "messageId", "delta", "timestamp"];

type PlainTextDelta = Extract<AGUIEvent, { type: EventType.TEXT_MESSAGE_CONTENT }> & { timestamp: number };

function isPlainTextDelta(event: AGUIEvent): event is PlainTextDelta {
  if (event.type !== EventType.TEXT_MESSAGE_CONTENT) return false;
  // for-in also lists inherited enumerable keys, which JSON.stringify leaves out: such an event goes the general way.
  let at = 0;
  for (const key in event) if (key !== TEXT_DELTA_KEYS[at++]) return false;
  return (
    at === TEXT_DELTA_KEYS.length &&
    typeof event.messageId === "string" &&
    typeof event.delta === "string" &&
    Number.isSafeInteger(event.timestamp)
  );
}

// A message's deltas share its id, and a burst of them one millisecond: each is quoted or formatted once in a row.
let lastMessageId: string | undefined;
let lastMessageIdJson = "";
let lastTimestamp = Number.NaN;
let lastTimestampText = "";

function textDeltaRecord(event: PlainTextDelta): string {
  if (event.messageId !== lastMessageId) {
    lastMessageId = event.messageId;
    lastMessageIdJson = JSON.stringify(event.messageId);
  }
  if (event.timestamp !== lastTimestamp) {
    lastTimestamp = event.timestamp;
    // A safe integer formats the same as JSON.stringify writes it (no exponent below 1e21; -0 as 0).
    lastTimestampText = String(event.timestamp);
  }
  return `data: {"type":"TEXT_MESSAGE_CONTENT","messageId":${lastMessageIdJson},"delta":${JSON.stringify(event.delta)},"timestamp":${lastTimestampText}}\n\n`;
}
export const SSE_HEARTBEAT = ": heartbeat\n\n";

export const SSE_ENCODING: EventEncoding = {
  headers: { "Content-Type": `${SSE_MEDIA_TYPE}; charset=utf-8`, ...STREAM_HEADERS },
  encode: encodeSseEvent,
  heartbeat: SSE_HEARTBEAT,
};

/** `encodeProtobuf` frames whatever it is given; the encoder's own negotiation is used in `negotiateEncoding`. */
const protobufEncoder = new EventEncoder({ accept: AGUI_MEDIA_TYPE });

export const PROTOBUF_ENCODING: EventEncoding = {
  // Exactly the media type, no parameter: the client compares the Content-Type as a whole.
  headers: { "Content-Type": protobufEncoder.getContentType(), ...STREAM_HEADERS },
  encode: (event) => protobufEncoder.encodeProtobuf(event),
  heartbeat: undefined,
};

/**
 * Protobuf when the client asks for it and does not prefer SSE; SSE
 * otherwise, also without an Accept and for one that names neither.
 *
 * `@ag-ui/encoder`'s `EventEncoder` says whether protobuf is acceptable at
 * all, but it also takes the wildcard (any type, any subtype) for a request
 * for protobuf, and that wildcard is what curl and fetch send by default:
 * they would get binary frames. So between two acceptable types the
 * Accept's own preference decides, by Express's negotiation (quality, then
 * specificity, then order), and a tie goes to SSE. The sink says the
 * answer varies by Accept (see `sse-sink.ts`).
 */
export function negotiateEncoding(req: Pick<Request, "get" | "accepts">): EventEncoding {
  const accept = req.get("accept");
  // What AG-UI's HttpAgent and EventSource send, and what a client without preferences sends: nothing to weigh.
  if (accept === undefined || accept === SSE_MEDIA_TYPE) return SSE_ENCODING;
  const protobufAcceptable = new EventEncoder({ accept }).getContentType() === AGUI_MEDIA_TYPE;
  return protobufAcceptable && req.accepts([SSE_MEDIA_TYPE, AGUI_MEDIA_TYPE]) === AGUI_MEDIA_TYPE ? PROTOBUF_ENCODING : SSE_ENCODING;
}
