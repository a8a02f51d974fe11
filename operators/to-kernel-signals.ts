/**
 * A2A updates → kernel signals (see `kernel-signal.ts`).
 *
 * Reads only what the wire contract (§2, §3) defines: the task and context
 * ids, `metadata.iac_code.{iacCodeSessionId, thinking, tool, usage,
 * assistantFinal, input, pendingPermissions}`, status text, artifacts and the
 * task state. A frame without `metadata.iac_code` (an agent that is not the
 * iac-code kernel) waiting in `input-required` or `auth-required` asks for
 * free text (`interrupts/plain-agent-input.ts`); the data parts of its
 * messages are its tool calls and data (`model/agent-message-parts.ts`). Anything
 * else — unknown parts, keys or states — is ignored, never fatal (R-SIB-9).
 * One update can carry several signals; they come out in the order a reader
 * of the frame would expect: ids, pipeline envelopes, reasoning, tool, usage,
 * artifact, text, inputs awaited, state. The operator passes the task's ids
 * and its state only when they change: a kernel repeats both on nearly
 * every frame, and every stage after this one would carry them for nothing.
 */
import type { OperatorFunction } from "rxjs";
import { emitEachPer } from "./emit-each.js";
import type { KernelInput, KernelSignal, SignalOf, TaskStateName, ToolStatus } from "../lib/model/kernel-signal.js";
import { toA2AUpdate, type A2AUpdate } from "./unwrap-stream-response.js";
import { isJsonObject as isObject, nonEmptyString as str, type JsonObject } from "../lib/model/json.js";
import { newToolCallId } from "../lib/model/tool-ids.js";
import { tokenUsageOf as usageOf } from "../lib/model/usage.js";
import { plainAgentInput } from "../lib/interrupts/plain-agent-input.js";
import { agentMessageSignals, hasDataPart } from "../lib/model/agent-message-parts.js";

const STATE_NAMES = new Set<TaskStateName>([
  "submitted",
  "working",
  "input-required",
  "completed",
  "failed",
  "canceled",
  "rejected",
  "auth-required",
]);

/** The spellings kernels send (A2A 1.0's and the SDK's), read once here rather than on every frame. */
const KNOWN_SPELLINGS = new Map<string, TaskStateName>(
  [...STATE_NAMES].flatMap((name): Array<[string, TaskStateName]> => [
    [name, name],
    [`TASK_STATE_${name.toUpperCase().replaceAll("-", "_")}`, name],
  ]),
);

/** `TASK_STATE_INPUT_REQUIRED`, `input-required` and `input_required` all read as `input-required`. */
export function normalizeTaskState(raw: unknown): TaskStateName {
  if (typeof raw !== "string") return "unknown";
  const known = KNOWN_SPELLINGS.get(raw);
  if (known !== undefined) return known;
  const name = raw
    .trim()
    .toLowerCase()
    .replace(/^task_state_/, "")
    .replaceAll("_", "-");
  const canonical = name === "cancelled" ? "canceled" : name;
  return STATE_NAMES.has(canonical as TaskStateName) ? (canonical as TaskStateName) : "unknown";
}

/** What an absent object reads as; frozen, since it is shared by every frame. */
const NOTHING: JsonObject = Object.freeze({});

const isAgentRole = (role: unknown) => role === undefined || role === "ROLE_AGENT" || role === "agent";

function textOf(message: unknown): string {
  if (!isObject(message) || !Array.isArray(message.parts)) return "";
  // A loop, not map and join: a status text is read on every delta, and is nearly always one part.
  let text = "";
  for (const part of message.parts as unknown[]) if (isObject(part) && typeof part.text === "string") text += part.text;
  return text;
}

/** The agent turns after the last user turn of a Task's history, joined. */
function trailingAgentText(history: unknown): { text: string; messageId: string | undefined } {
  if (!Array.isArray(history)) return { text: "", messageId: undefined };
  const trailing: JsonObject[] = [];
  for (let i = history.length - 1; i >= 0; i--) {
    const message = history[i];
    if (!isObject(message) || !isAgentRole(message.role)) break;
    trailing.unshift(message);
  }
  return { text: trailing.map(textOf).join(""), messageId: str(trailing.at(-1)?.messageId) };
}

const TOOL_STATUSES = new Set<string>(["started", "input_complete", "completed", "failed"]);

function toolSignal(tool: JsonObject, newToolId: () => string): KernelSignal | undefined {
  if (tool.status === "progress") return { kind: "tool-progress", tool };
  if (typeof tool.status !== "string" || !TOOL_STATUSES.has(tool.status)) return undefined; // input_delta and unknowns
  return {
    kind: "tool",
    status: tool.status as ToolStatus,
    toolCallId: str(tool.toolUseId) ?? newToolId(),
    toolName: str(tool.name) ?? "tool",
    // Older kernels sent `input`; the contract reads only `toolInput`.
    input: tool.toolInput ?? { summary: tool.inputSummary },
    result: tool.result,
  };
}

/** The first session id named: the frame's own, its envelope's, then its batch's. Plain reads, no arrays: every frame asks. */
function sessionIdOf(iacCode: JsonObject): string | undefined {
  const direct = str(iacCode.iacCodeSessionId) ?? (isObject(iacCode.pipeline) ? str(iacCode.pipeline.iacCodeSessionId) : undefined);
  if (direct !== undefined) return direct;
  const batch = isObject(iacCode.pipelineBatch) ? iacCode.pipelineBatch.events : undefined;
  if (!Array.isArray(batch)) return undefined;
  for (const envelope of batch) {
    const sessionId = isObject(envelope) ? str(envelope.iacCodeSessionId) : undefined;
    if (sessionId !== undefined) return sessionId;
  }
  return undefined;
}

export interface ToKernelSignalsOptions {
  /**
   * The inputs `metadata.iac_code` waits on, already cut to the fields that
   * may be kept: the allowlist belongs to the interrupts module, and only
   * what it keeps may travel on to a client or the disk.
   */
  findInputs: (iacCode: JsonObject) => KernelInput[];
  /** Id for a tool call the kernel sent without `toolUseId`. */
  newToolId?: () => string;
  /**
   * Whether the Task snapshot that opens a stream may announce inputs. A
   * new task cannot be waiting yet, and an SDK kernel may serialise that
   * snapshot late, with metadata merged in from later updates; the status
   * update that parks the task carries the input anyway.
   */
  readLeadingSnapshotInputs?: boolean;
}

/** What a stream told already: a frame that repeats the task's ids, its session or its state makes no signal of them. */
export interface ToldBefore {
  bound?: SignalOf<"task-bound">;
  sessionId?: string;
  state?: TaskStateName;
}

export function signalsOf(
  update: A2AUpdate,
  options: Pick<Required<ToKernelSignalsOptions>, "newToolId" | "findInputs">,
  told: ToldBefore = {},
): KernelSignal[] {
  const { kind, body } = update;
  const signals: KernelSignal[] = [];
  const taskId = str(kind === "task" ? body.id : body.taskId);
  const contextId = str(body.contextId);
  if (taskId && (taskId !== told.bound?.taskId || contextId !== told.bound.contextId))
    signals.push({ kind: "task-bound", taskId, contextId });

  const metadata = isObject(body.metadata) ? body.metadata : NOTHING;
  const iacCode = isObject(metadata.iac_code) ? metadata.iac_code : NOTHING;
  const sessionId = sessionIdOf(iacCode);
  if (sessionId && sessionId !== told.sessionId) signals.push({ kind: "session-bound", sessionId });

  // The batch first, then the single envelope: the kernel's own order (contract §3).
  if (isObject(iacCode.pipelineBatch) && Array.isArray(iacCode.pipelineBatch.events)) {
    for (const envelope of iacCode.pipelineBatch.events) {
      if (isObject(envelope)) signals.push({ kind: "pipeline-event", envelope, recovered: false });
    }
  }
  if (isObject(iacCode.pipeline)) signals.push({ kind: "pipeline-event", envelope: iacCode.pipeline, recovered: false });

  const thinking = iacCode.thinking;
  if (isObject(thinking) && thinking.type === "raw_thinking" && str(thinking.text)) {
    signals.push({ kind: "reasoning", text: thinking.text as string });
  }
  if (isObject(iacCode.tool)) {
    const tool = toolSignal(iacCode.tool, options.newToolId);
    if (tool) signals.push(tool);
  }
  if (isObject(iacCode.usage)) signals.push({ kind: "usage", usage: usageOf(iacCode.usage) });
  if (kind === "artifactUpdate" && isObject(body.artifact)) signals.push(...artifactSignals(body.artifact));

  // A plain agent's data parts are read (tool calls, data for the client); a Task snapshot's only repeat what streamed.
  const readsData = iacCode === NOTHING && kind !== "task";
  if (kind === "message") {
    // An agent may answer with a bare Message instead of a task: that is the whole reply.
    if (readsData && hasDataPart(body)) signals.push(...agentMessageSignals(body, "final", options.newToolId));
    else {
      const text = textOf(body);
      if (text) signals.push({ kind: "text", messageId: str(body.messageId), text, source: "final" });
    }
    if (told.state !== "completed") signals.push({ kind: "task-state", state: "completed" });
    return signals;
  }

  const status = isObject(body.status) ? body.status : NOTHING;
  const agentMessage = isObject(status.message) && isAgentRole(status.message.role) ? status.message : undefined;
  const statusText = agentMessage ? textOf(agentMessage) : "";
  const isFinal = isObject(iacCode.assistantFinal) && iacCode.assistantFinal.complete === true;
  const statusMessageId = isObject(status.message) ? str(status.message.messageId) : undefined;
  if (readsData && agentMessage && hasDataPart(agentMessage)) {
    signals.push(...agentMessageSignals(agentMessage, "delta", options.newToolId));
  } else if (statusText) {
    signals.push({ kind: "text", messageId: statusMessageId, text: statusText, source: isFinal ? "final" : "delta" });
  } else if (kind === "task") {
    const history = trailingAgentText(body.history);
    if (history.text)
      signals.push({ kind: "text", messageId: statusMessageId ?? history.messageId, text: history.text, source: "history" });
  }
  if (iacCode.input !== undefined || iacCode.pendingPermissions !== undefined) {
    const inputs = options.findInputs(iacCode);
    if (inputs.length > 0) signals.push({ kind: "inputs", inputs });
  }
  const state = status.state === undefined ? undefined : normalizeTaskState(status.state);
  // An agent without iac-code metadata asks in its status message alone (see plain-agent-input.ts). A task
  // snapshot (GetTask) with neither metadata nor a message asks nothing new: it may be a task parked on an
  // iac-code input the thread already holds, and must not add a second, made-up question beside it.
  const asks = kind !== "task" || isObject(status.message);
  if ((state === "input-required" || state === "auth-required") && iacCode === NOTHING && asks) {
    signals.push({ kind: "inputs", inputs: [plainAgentInput({ taskId, state, prompt: statusText, messageId: statusMessageId })] });
  }
  // A failure's status message is the kernel's reason: the run's RUN_ERROR carries it as well as the chat's text.
  const explainsFailure = statusText !== "" && (state === "failed" || state === "rejected");
  if (state !== undefined && state !== told.state)
    signals.push(explainsFailure ? { kind: "task-state", state, reason: statusText } : { kind: "task-state", state });
  return signals;
}

/**
 * An artifact's text is the agent's answer, shown as text (an agent
 * without iac-code metadata often answers in a text artifact, chunk by
 * chunk under one artifact id); its other parts, data and files, are the
 * artifact the client is sent (R-CUS-2). The iac-code kernel's artifacts
 * are files only, and pass whole.
 */
function artifactSignals(artifact: JsonObject): KernelSignal[] {
  const parts: unknown[] = Array.isArray(artifact.parts) ? artifact.parts : [];
  const isText = (part: unknown) => isObject(part) && typeof part.text === "string";
  if (!parts.some(isText)) return [{ kind: "artifact", artifact }];
  const text = parts.map((part) => (isText(part) ? (part as { text: string }).text : "")).join("");
  const rest = parts.filter((part) => !isText(part));
  return [
    ...(rest.length > 0 ? [{ kind: "artifact", artifact: { ...artifact, parts: rest } } as const] : []),
    ...(text ? [{ kind: "text", messageId: str(artifact.artifactId), text, source: "delta" } as const] : []),
  ];
}

export function toKernelSignals(options: ToKernelSignalsOptions): OperatorFunction<A2AUpdate, KernelSignal> {
  return signalsOfEach(options, (update: A2AUpdate) => update);
}

/**
 * `toKernelSignals` for a stream's JSON-RPC results, each unwrapped on the
 * way (`toA2AUpdate`): one stage rather than a `map` before it, on every
 * frame of every run.
 */
export function resultsToKernelSignals(options: ToKernelSignalsOptions): OperatorFunction<JsonObject, KernelSignal> {
  return signalsOfEach(options, toA2AUpdate);
}

function signalsOfEach<T>(options: ToKernelSignalsOptions, updateOf: (frame: T) => A2AUpdate): OperatorFunction<T, KernelSignal> {
  const resolved = {
    findInputs: options.findInputs,
    newToolId: options.newToolId ?? newToolCallId,
  };
  const readLeading = options.readLeadingSnapshotInputs ?? true;
  return emitEachPer(() => {
    // Nearly every frame repeats the task's ids, the kernel's session and its `working` state; downstream only
    // acts on a change, and a repeat is not even made. A repeated session cost most: while its first write was
    // under way, each repeat was written aside and came through the rest of the chain twice (`persistIdsAside`).
    const told: ToldBefore = {};
    const isNews = (signal: KernelSignal): boolean => {
      if (signal.kind === "task-bound") {
        if (signal.taskId === told.bound?.taskId && signal.contextId === told.bound.contextId) return false;
        told.bound = signal;
      } else if (signal.kind === "session-bound") {
        if (signal.sessionId === told.sessionId) return false;
        told.sessionId = signal.sessionId;
      } else if (signal.kind === "task-state") {
        if (signal.state === told.state) return false;
        told.state = signal.state;
      }
      return true;
    };
    return (frame: T, index) => {
      const update = updateOf(frame);
      const skipInputs = index === 0 && update.kind === "task" && !readLeading;
      // Kept in place: the array is this frame's own, and a second one per frame is what a filter would cost.
      const signals = signalsOf(update, resolved, told);
      let kept = 0;
      for (const signal of signals) if (isNews(signal) && !(skipInputs && signal.kind === "inputs")) signals[kept++] = signal;
      // Set only when something was left out: setting an array's length calls into the runtime, on every frame.
      if (kept !== signals.length) signals.length = kept;
      return signals;
    };
  });
}
