/**
 * A thread's tasks, as read back from the kernel, → the conversation a page
 * showed while it watched them live: the same messages under the same ids.
 *
 * Each task's history is played through the run's own projection
 * (`projectText`, `projectReasoning`, `projectTools`), one run at a time,
 * and the events it makes are applied as `@ag-ui/client` applies them. So
 * an agent message gets the id the live stream gave it (`<runId>:…`,
 * `model/message-ids.ts`), a tool call sits in the message its turn showed
 * it in, its result right below it, and thinking beside the text it came
 * with. Which run showed which part of a task's history is what the thread
 * keeps (`threads/message-runs.ts`): the message that opened each run.
 *
 * What a history holds is the kernel's choice. Text always; a kernel that
 * records its tool and thinking statuses in the history too (their
 * `metadata.iac_code.tool` / `.thinking` on the history entry, as the demo
 * kernel does) has them shown as well. The interrupt answers the service
 * sent (`agui-resume-…`) were no message of the user's, and are left out.
 */
import { EventType, type AGUIEvent, type AssistantMessage, type Message } from "@ag-ui/core";
import { from, pipe, toArray } from "rxjs";
import { isJsonObject, type JsonObject } from "../model/json.js";
import { isSignal, type KernelSignal, type RunItem } from "../model/kernel-signal.js";
import { signalsOf } from "../../operators/to-kernel-signals.js";
import { projectText } from "../../operators/project-text.js";
import { projectReasoning } from "../../operators/project-reasoning.js";
import { projectTools } from "../../operators/project-tools.js";

/** One history entry, cut to what the conversation shows. */
export type HistoryEntry =
  | { role: "user"; messageId: string; text: string }
  | { role: "agent"; messageId: string; text: string; iacCode?: { tool?: JsonObject; thinking?: JsonObject } };

/** A task as the conversation needs it: its id and its entries, oldest first. */
export interface HistoryTask {
  id: string;
  entries: HistoryEntry[];
}

/** Who named which messages: the opening message of each run the thread kept, and the run a task's unmarked start belongs to. */
export interface HistoryNaming {
  /**
   * Kernel message id that opened a run → the run its messages are named
   * under, and the tool calls its answer (that message's text) was shown as
   * the result of at once.
   */
  runs: ReadonlyMap<string, { runId: string; answeredCalls: readonly string[] }>;
  /** The run of a task's entries before any known opening (the watched task's current run), if known. */
  runOfTask?: (taskId: string) => string | undefined;
}

export const RESUME_MESSAGE_ID_PREFIX = "agui-resume-";

const isUserRole = (role: unknown) => role === "ROLE_USER" || role === "user";
// As the projection reads status messages: an absent role is the agent's.
const isAgentRole = (role: unknown) => role === undefined || role === "ROLE_AGENT" || role === "agent";

const textOf = (message: JsonObject): string =>
  (Array.isArray(message.parts) ? message.parts : [])
    .map((part: unknown) => (isJsonObject(part) && typeof part.text === "string" ? part.text : ""))
    .join("");

/** What of a history entry's `metadata.iac_code` the conversation shows. */
function shownMetadata(message: JsonObject): { tool?: JsonObject; thinking?: JsonObject } | undefined {
  const iacCode = isJsonObject(message.metadata) ? message.metadata.iac_code : undefined;
  if (!isJsonObject(iacCode)) return undefined;
  const tool = isJsonObject(iacCode.tool) ? iacCode.tool : undefined;
  const thinking = isJsonObject(iacCode.thinking) ? iacCode.thinking : undefined;
  return tool || thinking ? { ...(tool ? { tool } : {}), ...(thinking ? { thinking } : {}) } : undefined;
}

/**
 * A task's history cut to what the conversation shows (nothing of a
 * message's images or data survives it), with a measure of what it keeps,
 * in UTF-16 units: the reader charges that to its budget.
 */
export function historyTask(task: unknown): { task: HistoryTask; size: number } | undefined {
  if (!isJsonObject(task) || typeof task.id !== "string") return undefined;
  const taskId = task.id;
  const entries: HistoryEntry[] = [];
  let size = taskId.length;
  (Array.isArray(task.history) ? task.history : []).forEach((message: unknown, index) => {
    if (!isJsonObject(message)) return;
    const messageId = typeof message.messageId === "string" && message.messageId !== "" ? message.messageId : `${taskId}:history:${index}`;
    const text = textOf(message);
    if (isUserRole(message.role)) {
      entries.push({ role: "user", messageId, text });
      size += messageId.length + text.length;
      return;
    }
    if (!isAgentRole(message.role)) return;
    const iacCode = shownMetadata(message);
    if (!text && !iacCode) return;
    entries.push(iacCode ? { role: "agent", messageId, text, iacCode } : { role: "agent", messageId, text });
    size += messageId.length + text.length + (iacCode ? JSON.stringify(iacCode).length : 0);
  });
  return { task: { id: taskId, entries }, size };
}

/**
 * A task's agent entries as the kernel signals a live run read from them.
 * Consecutive text entries under one id are one message (a kernel may
 * record a streamed answer chunk by chunk), and an entry that repeats the
 * whole text so far (the final status of a streamed answer) replaces it.
 */
function agentSignals(entries: readonly HistoryEntry[]): KernelSignal[] {
  const signals: KernelSignal[] = [];
  let text: { messageId: string; text: string } | undefined;
  const flushText = () => {
    if (text) signals.push({ kind: "text", messageId: text.messageId, text: text.text, source: "delta" });
    text = undefined;
  };
  const noNewIds = { findInputs: () => [], newToolId: () => "history-tool" };
  for (const entry of entries) {
    if (entry.role !== "agent") continue;
    if (entry.iacCode) {
      flushText();
      signals.push(...signalsOf({ kind: "statusUpdate", body: { status: {}, metadata: { iac_code: entry.iacCode } } }, noNewIds));
    }
    if (!entry.text) continue;
    if (text?.messageId === entry.messageId && !entry.iacCode) {
      text.text = entry.text.startsWith(text.text) ? entry.text : text.text + entry.text;
      continue;
    }
    flushText();
    text = { messageId: entry.messageId, text: entry.text };
  }
  flushText();
  return signals;
}

/** One run's signals → the AG-UI events its live stream showed, synchronously (the operators are pure). */
function project(signals: readonly KernelSignal[], runId: string): AGUIEvent[] {
  let events: AGUIEvent[] = [];
  from(signals as RunItem[])
    .pipe(pipe(projectText({ runId }), projectReasoning({ runId }), projectTools({ runId })), toArray())
    .subscribe((items) => (events = items.filter((item): item is AGUIEvent => !isSignal(item))));
  return events;
}

/**
 * The messages AG-UI events build, applied as `@ag-ui/client` applies them
 * (a message id seen before goes on in that message; a call goes in its
 * parent, a new assistant message when there is none; a result right below
 * the message that made the call), so they are the very objects a page that
 * watched live holds.
 */
export class MessageFold {
  readonly messages: Message[] = [];

  apply(event: AGUIEvent): void {
    const byId = (id: string) => this.messages.find((message) => message.id === id);
    const withCall = (toolCallId: string) =>
      this.messages.find(
        (message): message is AssistantMessage =>
          message.role === "assistant" && message.toolCalls?.some((call) => call.id === toolCallId) === true,
      );
    switch (event.type) {
      case EventType.TEXT_MESSAGE_START:
        if (!byId(event.messageId)) this.messages.push({ id: event.messageId, role: "assistant", content: "" });
        return;
      case EventType.REASONING_MESSAGE_START:
        if (!byId(event.messageId)) this.messages.push({ id: event.messageId, role: "reasoning", content: "" });
        return;
      case EventType.TEXT_MESSAGE_CONTENT:
      case EventType.REASONING_MESSAGE_CONTENT: {
        const message = byId(event.messageId);
        if (message && (message.role === "assistant" || message.role === "reasoning"))
          message.content = `${message.content ?? ""}${event.delta}`;
        return;
      }
      case EventType.TOOL_CALL_START: {
        if (withCall(event.toolCallId)) return;
        const named = event.parentMessageId === undefined ? undefined : byId(event.parentMessageId);
        let parent = named?.role === "assistant" ? named : undefined;
        if (!parent) {
          parent = {
            id: named || event.parentMessageId === undefined ? event.toolCallId : event.parentMessageId,
            role: "assistant",
            toolCalls: [],
          };
          this.messages.push(parent);
        }
        (parent.toolCalls ??= []).push({ id: event.toolCallId, type: "function", function: { name: event.toolCallName, arguments: "" } });
        return;
      }
      case EventType.TOOL_CALL_ARGS: {
        const call = withCall(event.toolCallId)?.toolCalls?.find(({ id }) => id === event.toolCallId);
        if (call) call.function.arguments += event.delta;
        return;
      }
      case EventType.TOOL_CALL_RESULT: {
        const result: Message = { id: event.messageId, toolCallId: event.toolCallId, role: "tool", content: event.content };
        if (event.metadata !== undefined) Object.assign(result, { metadata: structuredClone(event.metadata) });
        const at = this.messages.findIndex((message) => message === withCall(event.toolCallId));
        if (at === -1) {
          this.messages.push(result);
          return;
        }
        let below = at + 1;
        while (below < this.messages.length && this.messages[below]!.role === "tool") below++;
        this.messages.splice(below, 0, result);
        return;
      }
      default:
        return;
    }
  }
}

/**
 * Tasks, oldest first → the conversation. A task's entries are split where
 * a run the thread kept opened (its first message to the kernel); each
 * part is projected under that run's id. Entries no kept run opened (a
 * thread older than that record) are named after their task and their
 * place in it (`<taskId>:<n>:…`), so they stay apart.
 */
export function conversationOf(tasks: readonly HistoryTask[], naming: HistoryNaming): Message[] {
  const fold = new MessageFold();
  for (const task of tasks) {
    let run = naming.runOfTask?.(task.id);
    let unnamed = 0;
    // A task's first message is its run's, even unmarked: the run it is known to belong to names it then.
    let opening = true;
    let part: HistoryEntry[] = [];
    let answerResults: KernelSignal[] = [];
    const flush = () => {
      const signals = [...answerResults, ...agentSignals(part)];
      part = [];
      answerResults = [];
      if (signals.length === 0) return;
      for (const event of project(signals, run ?? `${task.id}:${unnamed}`)) fold.apply(event);
    };
    for (const entry of task.entries) {
      if (entry.role === "agent") {
        part.push(entry);
        continue;
      }
      const opened = naming.runs.get(entry.messageId);
      const isAnswer = entry.messageId.startsWith(RESUME_MESSAGE_ID_PREFIX);
      if (opened !== undefined || (!isAnswer && !opening)) {
        flush();
        run = opened?.runId;
        if (opened === undefined) unnamed++;
      }
      opening = false;
      // As the resumed run showed it: the answer as the result of the call it answered, before anything the kernel said.
      for (const toolCallId of opened?.answeredCalls ?? []) {
        answerResults.push({ kind: "tool", status: "completed", toolCallId, toolName: "tool", input: undefined, result: entry.text });
      }
      if (!isAnswer && entry.text && !fold.messages.some(({ id }) => id === entry.messageId)) {
        fold.messages.push({ id: entry.messageId, role: "user", content: entry.text });
      }
    }
    flush();
  }
  return fold.messages;
}
