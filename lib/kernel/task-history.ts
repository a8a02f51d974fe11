/**
 * What the demo kernel's tasks said, turn by turn, as a task's `history`
 * (`GetTask`, `ListTasks` with `historyLength`): each turn's user message,
 * then the agent's text of that turn, whole. A client that reloads its page
 * rebuilds the conversation from it (the service keeps no text).
 *
 * The SDK's own history cannot hold that: it records a status message once
 * per `messageId`, and a kernel streams its answer as many status messages
 * under one id (`<taskId>-message`, every turn of the task), so only the
 * first delta of the first turn would be kept. Here the text of consecutive
 * statuses under one id grows one entry; a user message (the next turn)
 * starts a new one, and the `assistantFinal` status, which repeats the whole
 * answer, replaces the entry's text rather than adding to it.
 *
 * The executor notes each status as it publishes it; the SDK takes it in a
 * moment later. A task is handed out with the history of the statuses the
 * SDK has taken in (up to the stored status's time; the executor stamps
 * statuses in increasing order), so a stored task never shows text its
 * stream has not sent yet.
 */
import { Part, Role, type ListTasksRequest, type Message, type Task, type TaskStatusUpdateEvent } from "@a2a-js/sdk";
import type { ServerCallContext, TaskStore } from "@a2a-js/sdk/server";
import { isJsonObject } from "../model/json.js";

const textOf = (parts: readonly Part[]) => parts.map((part) => (part.content?.$case === "text" ? part.content.value : "")).join("");

type Noted = { kind: "user"; message: Message } | { kind: "text"; message: Message; text: string; final: boolean; at: string };

export class TaskHistory {
  readonly #tasks = new Map<string, Noted[]>();

  /** A user message to the task: a turn's, or an answer to what it waited for (a sideband answer too). */
  userTurn(taskId: string, message: Message): void {
    this.#of(taskId).push({ kind: "user", message: structuredClone(message) });
  }

  /** A status the task publishes, stamped: its agent text, if any. */
  status(update: TaskStatusUpdateEvent): void {
    const message = update.status?.message;
    const at = update.status?.timestamp;
    if (!message || message.role !== Role.ROLE_AGENT || at === undefined) return;
    const text = textOf(message.parts);
    if (!text) return;
    const iacCode = update.metadata?.iac_code as unknown;
    const final = isJsonObject(iacCode) && isJsonObject(iacCode.assistantFinal) && iacCode.assistantFinal.complete === true;
    this.#of(update.taskId).push({ kind: "text", message: structuredClone(message), text, final, at });
  }

  /** `task` with the history of what it said up to its stored status; as it is when nothing was noted. */
  fill(task: Task): Task {
    const noted = this.#tasks.get(task.id);
    if (!noted) return task;
    const upTo = task.status?.timestamp;
    const history: Message[] = [];
    for (const item of noted) {
      if (item.kind === "user") {
        history.push(structuredClone(item.message));
        continue;
      }
      // Text the SDK has not taken in yet; what follows it is no older, but an answer noted meanwhile is in.
      if (upTo !== undefined && item.at > upTo) continue;
      const last = history.at(-1);
      if (last?.role === Role.ROLE_AGENT && last.messageId === item.message.messageId) {
        last.parts = [Part.fromJSON({ text: item.final ? item.text : textOf(last.parts) + item.text })];
      } else {
        history.push({ ...structuredClone(item.message), parts: [Part.fromJSON({ text: item.text })] });
      }
    }
    return { ...task, history };
  }

  #of(taskId: string): Noted[] {
    let noted = this.#tasks.get(taskId);
    if (!noted) this.#tasks.set(taskId, (noted = []));
    return noted;
  }
}

/** A task store that hands out every task with its recorded history (see `TaskHistory`). */
export class HistoryTaskStore implements TaskStore {
  constructor(
    private readonly inner: TaskStore,
    private readonly history: TaskHistory,
  ) {}

  save(task: Task, context: ServerCallContext): Promise<void> {
    return this.inner.save(task, context);
  }

  async load(taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    const task = await this.inner.load(taskId, context);
    return task && this.history.fill(task);
  }

  async list(params: ListTasksRequest, context: ServerCallContext) {
    const page = await this.inner.list(params, context);
    return { ...page, tasks: page.tasks.map((task) => this.history.fill(task)) };
  }
}
