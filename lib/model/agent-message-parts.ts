/**
 * The parts of a message from an agent without iac-code metadata, as
 * signals, in the order the agent put them: its text; its data parts in
 * the tool-call convention other A2A bridges (AG-UI's own among them) use;
 * and whatever other data it holds.
 *
 *   {data: {type: "tool-call", id, name, arguments}}  → tool input_complete (TOOL_CALL_START, ARGS, END)
 *   {data: {type: "tool-result", toolCallId, payload}} → tool completed (TOOL_CALL_RESULT)
 *   any other data part                                → one `message-data` signal per message, after the rest
 *
 * Text between two tool parts is a signal of its own, so a call lands
 * after the words that announce it and before those that follow it. The
 * iac-code kernel's messages are not read here: their data parts are not
 * for the client (contract §2), and its acknowledgement of a permission
 * (`kind: "permission_ack"`) is left out wherever it comes.
 */
import type { KernelSignal } from "./kernel-signal.js";
import { isJsonObject, nonEmptyString, type JsonObject } from "./json.js";

const TOOL_CALL = "tool-call";
const TOOL_RESULT = "tool-result";

/** A 1.0 data part (the 0.3 dialect's `{kind: "data"}` reads as one too): `{data, mediaType?, metadata?}`. */
const isDataPart = (part: unknown): part is JsonObject & { data: unknown } => isJsonObject(part) && "data" in part && !("text" in part);

/** Whether the message has a data part at all: most have none, and are read as text alone. */
export function hasDataPart(message: JsonObject): boolean {
  return Array.isArray(message.parts) && message.parts.some(isDataPart);
}

const isKernelAck = (data: unknown) => isJsonObject(data) && data.kind === "permission_ack";

function toolOf(data: unknown, newToolId: () => string): KernelSignal | undefined {
  if (!isJsonObject(data)) return undefined;
  if (data.type === TOOL_CALL) {
    return {
      kind: "tool",
      status: "input_complete",
      toolCallId: nonEmptyString(data.id) ?? newToolId(),
      toolName: nonEmptyString(data.name) ?? "tool",
      input: data.arguments ?? {},
      result: undefined,
    };
  }
  const toolCallId = nonEmptyString(data.toolCallId);
  if (data.type === TOOL_RESULT && toolCallId !== undefined) {
    // A result that names no payload is the part's data itself.
    return { kind: "tool", status: "completed", toolCallId, toolName: "tool", input: undefined, result: data.payload ?? data };
  }
  return undefined;
}

/**
 * `source` is how the message's text counts (`projectText`); a bare
 * message whose text a tool part cuts in two sends its pieces as deltas,
 * since a whole-message text can be shown only once.
 */
export function agentMessageSignals(message: JsonObject, source: "delta" | "final", newToolId: () => string): KernelSignal[] {
  const parts: unknown[] = Array.isArray(message.parts) ? message.parts : [];
  const messageId = nonEmptyString(message.messageId);
  const signals: KernelSignal[] = [];
  const data: JsonObject[] = [];
  const tools: Array<KernelSignal | undefined> = parts.map((part) => (isDataPart(part) ? toolOf(part.data, newToolId) : undefined));
  const textSource = tools.some((tool) => tool !== undefined) ? "delta" : source;
  let text = "";
  const flushText = () => {
    if (text !== "") signals.push({ kind: "text", messageId, text, source: textSource });
    text = "";
  };
  parts.forEach((part, index) => {
    const tool = tools[index];
    if (tool !== undefined) {
      flushText();
      signals.push(tool);
    } else if (isJsonObject(part) && typeof part.text === "string") text += part.text;
    else if (isDataPart(part) && !isKernelAck(part.data)) data.push(part);
  });
  flushText();
  if (data.length > 0) signals.push({ kind: "message-data", message: { ...message, parts: data } });
  return signals;
}
