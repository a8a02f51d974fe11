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
 * A kernel's own tool and thinking statuses say nothing in a message, so
 * the SDK keeps none of them; here each is kept as an agent entry of its
 * own with the status's `metadata.iac_code.tool` / `.thinking` on the
 * entry (consecutive thinking joined), between the text before and after
 * it: a reloaded page is shown the calls, their results and the thinking
 * of every turn, where the live stream showed them.
 *
 * The executor notes each status as it publishes it; the SDK takes it in a
 * moment later. A task is handed out with the history of the statuses the
 * SDK has taken in (up to the stored status's time; the executor stamps
 * statuses in increasing order), so a stored task never shows text its
 * stream has not sent yet.
 */
import { Message, Part, Role, type ListTasksRequest, type Task, type TaskStatusUpdateEvent } from "@a2a-js/sdk";
import type { ServerCallContext, TaskStore } from "@a2a-js/sdk/server";
import { isJsonObject } from "../model/json.js";

const textOf = (parts: readonly Part[]) => parts.map((part) => (part.content?.$case === "text" ? part.content.value : "")).join("");

type Noted =
  | { kind: "user"; message: Message }
  | { kind: "text"; message: Message; text: string; final: boolean; at: string }
  | { kind: "tool"; tool: Record<string, unknown>; at: string }
  | { kind: "thinking"; text: string; at: string };

/** The tool statuses a conversation shows: a call, its input, its outcome (progress and partial input are live-only). */
const KEPT_TOOL_STATUSES = new Set(["started", "input_complete", "completed", "failed"]);

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
    if (at === undefined) return;
    const iacCode = update.metadata?.iac_code as unknown;
    if (isJsonObject(iacCode) && isJsonObject(iacCode.tool) && KEPT_TOOL_STATUSES.has(iacCode.tool.status as string)) {
      this.#of(update.taskId).push({ kind: "tool", tool: structuredClone(iacCode.tool), at });
    }
    if (isJsonObject(iacCode) && isJsonObject(iacCode.thinking) && typeof iacCode.thinking.text === "string" && iacCode.thinking.text) {
      this.#of(update.taskId).push({ kind: "thinking", text: iacCode.thinking.text, at });
    }
    if (!message || message.role !== Role.ROLE_AGENT) return;
    const text = textOf(message.parts);
    if (!text) return;
    const final = isJsonObject(iacCode) && isJsonObject(iacCode.assistantFinal) && iacCode.assistantFinal.complete === true;
    this.#of(update.taskId).push({ kind: "text", message: structuredClone(message), text, final, at });
  }

  /** `task` with the history of what it said up to its stored status; as it is when nothing was noted. */
  fill(task: Task): Task {
    const noted = this.#tasks.get(task.id);
    if (!noted) return task;
    const upTo = task.status?.timestamp;
    const history: Message[] = [];
    for (const [index, item] of noted.entries()) {
      if (item.kind === "user") {
        history.push(structuredClone(item.message));
        continue;
      }
      // Text the SDK has not taken in yet; what follows it is no older, but an answer noted meanwhile is in.
      if (upTo !== undefined && item.at > upTo) continue;
      const last = history.at(-1);
      if (item.kind === "thinking") {
        const thinking = last?.metadata?.iac_code as { thinking?: { text: string } } | undefined;
        if (thinking?.thinking && last!.messageId.startsWith(`${task.id}-thinking-`)) thinking.thinking.text += item.text;
        else history.push(statusEntry(`${task.id}-thinking-${index}`, task, { thinking: { type: "raw_thinking", text: item.text } }));
        continue;
      }
      if (item.kind === "tool") {
        history.push(statusEntry(`${task.id}-tool-${index}`, task, { tool: structuredClone(item.tool) }));
        continue;
      }
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

/** A status that says nothing in a message, as a history entry: no parts, its `iac_code` metadata on the entry. */
function statusEntry(messageId: string, task: Task, iacCode: Record<string, unknown>): Message {
  return Message.fromJSON({
    messageId,
    role: "ROLE_AGENT",
    parts: [],
    taskId: task.id,
    contextId: task.contextId,
    metadata: { iac_code: iacCode },
  });
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
