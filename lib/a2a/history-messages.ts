/**
 * A thread's conversation as AG-UI messages, read back from the kernel
 * (R-SIB-5): the service keeps no text, the kernel's tasks do. Each turn of
 * a thread is a task of the thread's context (a new message starts a new
 * execution, and so a new task; answers to interrupts go to the same task),
 * so the conversation is the histories of the context's tasks, oldest first
 * (how they become messages: `history-replay.ts`).
 *
 * The newest tasks are read first, and what each keeps is charged to the
 * snapshot's budget (`history-budget.ts`): when the next older task does not
 * fit, it and every older one are left out, and the read says how many.
 */
import { EventType, type AGUIEvent, type Message } from "@ag-ui/core";
import { isJsonObject } from "../model/json.js";
import type { A2AClient } from "./client.js";
import { HistoryReads, type HistoryCharge, type HistoryCut } from "./history-budget.js";
import { conversationOf, historyTask, type HistoryNaming, type HistoryTask } from "./history-replay.js";

export { conversationOf, historyTask, type HistoryNaming } from "./history-replay.js";

/** The newest turns a conversation is rebuilt from: one `ListTasks` page. */
export const CONVERSATION_TASKS = 100;
/** Messages read per task: the history length the adapter always asks for (contract §1). */
export const HISTORY_LENGTH = 100;
/** `GetTask` calls one conversation has in flight at once (within the process's own limit). */
const CONCURRENT_READS = 4;

/** The CUSTOM event that says a snapshot left its oldest turns out. */
export const HISTORY_TRUNCATED_EVENT = "iac-code.history-truncated.v1";

/** Older turns a snapshot left out, and why: its own budget, or what the process had left. */
export interface LeftOut {
  /** Tasks (turns) not shown: the oldest ones. */
  tasks: number;
  reason: HistoryCut;
  /** The snapshot's budget, in UTF-16 units of kept text. */
  budget: number;
}

export interface Conversation {
  messages: Message[];
  leftOut?: LeftOut;
}

const noNames: HistoryNaming = { runs: new Map() };

/** The conversation as the events that show it: the truncation notice first, when older turns were left out. */
export function conversationEvents({ messages, leftOut }: Conversation): AGUIEvent[] {
  const snapshot: AGUIEvent = { type: EventType.MESSAGES_SNAPSHOT, messages };
  if (!leftOut) return [snapshot];
  const notice: AGUIEvent = { type: EventType.CUSTOM, name: HISTORY_TRUNCATED_EVENT, value: { schemaVersion: 1, ...leftOut } };
  return [notice, snapshot];
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

export interface ReadOptions {
  naming?: HistoryNaming;
  /** The process's limits; a fresh, unshared one when absent. */
  reads?: HistoryReads;
  /** This snapshot's share of the budget, given back by the caller once the snapshot is sent. */
  charge?: HistoryCharge;
}

/**
 * The thread's conversation from the kernel: its context's newest
 * `CONVERSATION_TASKS` tasks (`ListTasks`), each read with its history
 * (`GetTask`, `HISTORY_LENGTH`) on its own and cut at once to what the
 * conversation shows, so no answer's images or data outlive their read.
 * A failing call fails the read.
 */
export async function readConversation(
  a2a: Pick<A2AClient, "listTasks" | "getTask">,
  contextId: string,
  options: ReadOptions = {},
): Promise<Conversation> {
  const reads = options.reads ?? new HistoryReads({ requestBytes: Number.MAX_SAFE_INTEGER, processBytes: Number.MAX_SAFE_INTEGER });
  const charge = options.charge ?? reads.charge();
  const listed = await a2a.listTasks(contextId, CONVERSATION_TASKS);
  const newestFirst = oldestFirst(Array.isArray(listed.tasks) ? listed.tasks : [])
    .flatMap((task) => (isJsonObject(task) && typeof task.id === "string" ? [task.id] : []))
    .reverse();
  const kept: HistoryTask[] = [];
  let leftOut: LeftOut | undefined;
  for (let start = 0; start < newestFirst.length && !leftOut; start += CONCURRENT_READS) {
    const batch = newestFirst.slice(start, start + CONCURRENT_READS);
    const read = await Promise.all(batch.map((id) => reads.read(async () => historyTask(await a2a.getTask(id, HISTORY_LENGTH)))));
    for (const [index, task] of read.entries()) {
      if (!task) continue;
      const taken = charge.take(task.size);
      if (taken !== true) {
        leftOut = { tasks: newestFirst.length - start - index, reason: taken, budget: charge.requestBytes };
        break;
      }
      kept.push(task.task);
    }
  }
  const messages = conversationOf(kept.reverse(), options.naming ?? noNames);
  return leftOut ? { messages, leftOut } : { messages };
}
