/**
 * A thread's conversation as AG-UI messages, read back from the kernel
 * (R-SIB-5): the service keeps no text, the kernel's tasks do. Each turn of
 * a thread is a task of the thread's context (a new message starts a new
 * execution, and so a new task; answers to interrupts go to the same task),
 * so the conversation is the histories of the context's tasks, oldest first.
 *
 * Only the standard turns are rebuilt: user and assistant messages with
 * their text. Thinking, tool calls, artifacts and images are not in a
 * task's history as the UI showed them, and are left out. The interrupt
 * answers the service sent (ids `agui-resume-…`, see
 * `interrupts/answer-message.ts`) were no message of the user's, and are
 * left out too.
 */
import { EventType, type AGUIEvent, type Message } from "@ag-ui/core";
import { isJsonObject, type JsonObject } from "../model/json.js";
import type { A2AClient } from "./client.js";

/** The newest turns a conversation is rebuilt from: one `ListTasks` page. */
export const CONVERSATION_TASKS = 100;
/** Messages read per task: the history length the adapter always asks for (contract §1). */
export const HISTORY_LENGTH = 100;
/**
 * The id an agent message gets, from its task and the id the kernel gave
 * it: the kernel's by default. An observer names the messages of the task
 * it watches as its live events will (`model/message-ids.ts`), so the live
 * text goes on in the message the snapshot showed.
 */
export type AssistantMessageId = (taskId: string, kernelMessageId: string) => string;

const kernelIds: AssistantMessageId = (_taskId, kernelMessageId) => kernelMessageId;

/** `GetTask` calls in flight at once while a conversation is read. */
const CONCURRENT_READS = 4;

const RESUME_MESSAGE_ID_PREFIX = "agui-resume-";

const isUserRole = (role: unknown) => role === "ROLE_USER" || role === "user";
// As the projection reads status messages: an absent role is the agent's.
const isAgentRole = (role: unknown) => role === undefined || role === "ROLE_AGENT" || role === "agent";

const textOf = (message: JsonObject): string =>
  (Array.isArray(message.parts) ? message.parts : [])
    .map((part: unknown) => (isJsonObject(part) && typeof part.text === "string" ? part.text : ""))
    .join("");

/**
 * One task's history → its messages, in order. A kernel may record a
 * streamed answer as one history entry per chunk under one message id:
 * consecutive agent entries with one id are one message, and an entry that
 * repeats the whole text so far (the final status of a streamed answer)
 * replaces it rather than doubling it.
 */
export function taskMessages(task: unknown, assistantId: AssistantMessageId = kernelIds): Message[] {
  if (!isJsonObject(task) || !Array.isArray(task.history)) return [];
  const taskId = typeof task.id === "string" ? task.id : "task";
  const messages: Message[] = [];
  let lastKernelId: string | undefined;
  task.history.forEach((entry: unknown, index) => {
    if (!isJsonObject(entry)) return;
    const kernelId = typeof entry.messageId === "string" && entry.messageId !== "" ? entry.messageId : `${taskId}:history:${index}`;
    const text = textOf(entry);
    const previous = messages.at(-1);
    if (isUserRole(entry.role)) {
      lastKernelId = undefined;
      if (text && !kernelId.startsWith(RESUME_MESSAGE_ID_PREFIX)) messages.push({ id: kernelId, role: "user", content: text });
      return;
    }
    if (!isAgentRole(entry.role) || !text) return;
    if (previous?.role === "assistant" && lastKernelId === kernelId) {
      const sofar = previous.content ?? "";
      previous.content = text.startsWith(sofar) ? text : sofar + text;
      return;
    }
    lastKernelId = kernelId;
    messages.push({ id: assistantId(taskId, kernelId), role: "assistant", content: text });
  });
  return messages;
}

/**
 * Tasks, oldest first → the conversation. A kernel names its messages per
 * task (`<taskId>-message`, every turn of the task), so one id may name
 * several messages: the last keeps it (live text that follows a snapshot
 * goes on with the latest message under that id) and each earlier one gets
 * `:<n>`, so a client keyed on ids keeps every message.
 */
export function conversationMessages(tasks: readonly unknown[], assistantId: AssistantMessageId = kernelIds): Message[] {
  const messages = tasks.flatMap((task) => taskMessages(task, assistantId));
  const total = new Map<string, number>();
  for (const { id } of messages) total.set(id, (total.get(id) ?? 0) + 1);
  const seen = new Map<string, number>();
  return messages.map((message) => {
    const nth = (seen.get(message.id) ?? 0) + 1;
    seen.set(message.id, nth);
    return nth === total.get(message.id) ? message : { ...message, id: `${message.id}:${nth}` };
  });
}

/** The conversation as the event that shows it. */
export const messagesSnapshot = (messages: Message[]): AGUIEvent => ({ type: EventType.MESSAGES_SNAPSHOT, messages });

/** When a listed task last changed, for ordering; undefined when the kernel did not say. */
const updatedAt = (task: unknown): number | undefined => {
  const timestamp = isJsonObject(task) && isJsonObject(task.status) ? task.status.timestamp : undefined;
  const time = typeof timestamp === "string" ? Date.parse(timestamp) : Number.NaN;
  return Number.isFinite(time) ? time : undefined;
};

/**
 * The context's tasks, oldest first: by their status time when the kernel
 * stamps every one, else in the reverse of the kernel's (newest-first)
 * listing. A thread runs one turn at a time, so a task's last change
 * orders it among the others.
 */
export function oldestFirst(listed: readonly unknown[]): unknown[] {
  const tasks = [...listed].reverse();
  const times = tasks.map(updatedAt);
  if (times.some((time) => time === undefined)) return tasks;
  return tasks
    .map((task, index) => ({ task, time: times[index]! }))
    .sort((a, b) => a.time - b.time)
    .map(({ task }) => task);
}

/**
 * The thread's conversation from the kernel: its context's newest
 * `CONVERSATION_TASKS` tasks (`ListTasks`), each read with its history
 * (`GetTask`, `HISTORY_LENGTH`) on its own, so no single answer holds a
 * whole conversation's images. A failing call fails the read.
 */
export async function readConversation(
  a2a: Pick<A2AClient, "listTasks" | "getTask">,
  contextId: string,
  assistantId: AssistantMessageId = kernelIds,
): Promise<Message[]> {
  const listed = await a2a.listTasks(contextId, CONVERSATION_TASKS);
  const ids = oldestFirst(Array.isArray(listed.tasks) ? listed.tasks : []).flatMap((task) =>
    isJsonObject(task) && typeof task.id === "string" ? [task.id] : [],
  );
  const tasks: unknown[] = [];
  for (let start = 0; start < ids.length; start += CONCURRENT_READS) {
    tasks.push(...(await Promise.all(ids.slice(start, start + CONCURRENT_READS).map((id) => a2a.getTask(id, HISTORY_LENGTH)))));
  }
  return conversationMessages(tasks, assistantId);
}
