/**
 * The `AgentExecutor` of the replay kernel: each turn replays a list of
 * fixture lines onto the task's event bus, with their recorded delays. A
 * task's first turn picks the fixture; its later turns (answers to an
 * interrupt, guidance) play that fixture's section for the turn.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { Message, Task, TaskState, type Part } from "@a2a-js/sdk";
import { AgentEvent, type AgentExecutor, type ExecutionEventBus, type RequestContext } from "@a2a-js/sdk/server";
import type { FixtureErrors } from "./fixture-errors.js";
import { frameKey, listFixtures, loadFixture, sectionFor, selectFixture, type FixtureLine } from "./fixtures.js";
import { permissionAnswerOf, withWaiting, type PendingInputs } from "./interrupts.js";
import { toLiveEvent, type LiveIds } from "./live-event.js";

export interface ReplayTurn {
  /** The user message's text parts, concatenated and trimmed. */
  text: string;
  /**
   * What `when` of a turn section is matched against: `text`, then the
   * compact JSON of each data part (`{"schemaVersion":1,…,"decision":"deny"}`),
   * one per line.
   */
  answer: string;
  taskId: string;
  contextId: string;
  /** The user message as A2A wire JSON. */
  message: unknown;
  /** How many turns this task had before this one (0 for a new task). */
  turnIndex: number;
}

export type ReplayScript = (turn: ReplayTurn) => FixtureLine[] | undefined;

export interface ReplayExecutorOptions {
  fixturesDir: string;
  script?: ReplayScript | undefined;
  timeScale: number;
  errors: FixtureErrors;
  pending: PendingInputs;
}

const userText = (parts: readonly Part[]) =>
  parts
    .map((part) => (part.content?.$case === "text" ? part.content.value : ""))
    .join("")
    .trim();

const answerText = (parts: readonly Part[]) =>
  [userText(parts), ...parts.flatMap((part) => (part.content?.$case === "data" ? [JSON.stringify(part.content.value)] : []))]
    .filter((piece) => piece !== "")
    .join("\n");

export class ReplayExecutor implements AgentExecutor {
  /**
   * Replays still running, per task. A task can have several at once: a
   * guidance turn is sent while the run it steers is still streaming.
   */
  private readonly replays = new Map<string, Set<AbortController>>();
  // A parked task has no replay any more, but its CANCELED status still
  // needs the task's context id.
  private readonly contextIds = new Map<string, string>();
  private readonly turnCounts = new Map<string, number>();
  /** The fixture each task's first turn picked; its later turns play from it. */
  private readonly fixtureNames = new Map<string, string>();
  private readonly shutdown = new AbortController();

  constructor(private readonly options: ReplayExecutorOptions) {}

  execute = async (ctx: RequestContext, bus: ExecutionEventBus): Promise<void> => {
    const ids: LiveIds = { taskId: ctx.taskId, contextId: ctx.contextId };
    const replay = new AbortController();
    const running = this.replays.get(ids.taskId) ?? new Set();
    this.replays.set(ids.taskId, running.add(replay));
    this.contextIds.set(ids.taskId, ids.contextId);
    const turnIndex = this.turnCounts.get(ids.taskId) ?? 0;
    this.turnCounts.set(ids.taskId, turnIndex + 1);
    this.takeAnswer(ctx);
    try {
      const lines = await this.linesFor({
        ...ids,
        text: userText(ctx.userMessage.parts),
        answer: answerText(ctx.userMessage.parts),
        message: Message.toJSON(ctx.userMessage),
        turnIndex,
      });
      await this.replay(lines, ctx, bus, AbortSignal.any([replay.signal, this.shutdown.signal]));
    } finally {
      running.delete(replay);
      if (running.size === 0) this.replays.delete(ids.taskId);
    }
  };

  /**
   * Publishes the CANCELED status itself rather than leaving it to the
   * replay: a task parked in input-required has no replay left to do it, and
   * the SDK's `cancelTask` waits for a terminal event on the bus.
   */
  cancelTask = async (taskId: string, bus: ExecutionEventBus): Promise<void> => {
    this.replays.get(taskId)?.forEach((replay) => replay.abort());
    this.options.pending.clear(taskId);
    const ids = { taskId, contextId: this.contextIds.get(taskId) ?? "" };
    const status = { state: "TASK_STATE_CANCELED", timestamp: new Date().toISOString() };
    bus.publish(toLiveEvent({ statusUpdate: { status } }, ids));
  };

  /** Stops every replay; their streams end as if the kernel went away. */
  stopAll(): void {
    this.shutdown.abort();
  }

  /**
   * A turn's message answers what the task waited for: a permission answer
   * (checked by the request handler already) resolves its input, any other
   * message to a parked task consumes the parked input.
   */
  private takeAnswer(ctx: RequestContext): void {
    const permission = permissionAnswerOf(ctx.userMessage);
    if (typeof permission?.inputId === "string") this.options.pending.resolve(ctx.taskId, permission.inputId);
    else if (ctx.task?.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED) this.options.pending.consumeInput(ctx.taskId);
  }

  private async linesFor(turn: ReplayTurn): Promise<FixtureLine[]> {
    const scripted = this.options.script?.(turn);
    if (scripted) return scripted;
    const { fixturesDir } = this.options;
    const name = this.fixtureNames.get(turn.taskId) ?? selectFixture(turn.text, await listFixtures(fixturesDir));
    this.fixtureNames.set(turn.taskId, name);
    const section = sectionFor(await loadFixture(fixturesDir, name), turn.turnIndex, turn.answer);
    return section?.lines ?? noSectionReply(name, turn.turnIndex);
  }

  private async replay(lines: FixtureLine[], ctx: RequestContext, bus: ExecutionEventBus, signal: AbortSignal) {
    const ids = { taskId: ctx.taskId, contextId: ctx.contextId };
    let started = false;
    for (const line of lines) {
      if (!(await this.wait(line.delayMs, signal))) return;
      if (line.error) {
        // Before any frame this is a refusal of the call; after, a broken stream.
        this.options.errors.raise(ctx.context, line.error);
        return;
      }
      // The SDK rejects a turn whose first event is not a Task. A follow-up
      // turn starts from the stored task, as a real kernel's does.
      if (!started && frameKey(line.frame) !== "task") {
        const task = ctx.task ?? Task.fromJSON({ ...idsAsTask(ids), status: { state: "TASK_STATE_SUBMITTED" } });
        // Without the input this turn answers (a sideband SendMessage returns this very event).
        bus.publish(AgentEvent.task(withWaiting(task, this.options.pending)));
      }
      started = true;
      const event = toLiveEvent(line.frame, ids);
      // Noted before publishing: the client may answer as soon as it sees the status.
      if (event.kind === "statusUpdate") this.options.pending.noteStatus(ids.taskId, event.data.status?.state, event.data.metadata);
      bus.publish(event.kind === "task" ? AgentEvent.task(withWaiting(event.data, this.options.pending)) : event);
    }
  }

  /** Waits a recorded delay; false once the replay has been stopped. */
  private async wait(delayMs: number, signal: AbortSignal): Promise<boolean> {
    const ms = delayMs * this.options.timeScale;
    if (ms > 0 && !signal.aborted) await sleep(ms, undefined, { signal }).catch(() => undefined);
    return !signal.aborted;
  }
}

const idsAsTask = (ids: LiveIds) => ({ id: ids.taskId, contextId: ids.contextId });

/** A turn the fixture has no section for: a short answer, and the task completes. */
export function noSectionReply(fixture: string, turnIndex: number): FixtureLine[] {
  const text = `The demo fixture \`${fixture}\` has nothing recorded for turn ${turnIndex}, so this task ends here. Send a fixture name as a new message to try another scenario.`;
  const message = { messageId: "${taskId}-message", role: "ROLE_AGENT", parts: [{ text }], taskId: "${taskId}", contextId: "${contextId}" };
  return [
    { delayMs: 0, frame: { statusUpdate: { status: { state: "TASK_STATE_WORKING", message } } } },
    { delayMs: 0, frame: { statusUpdate: { status: { state: "TASK_STATE_COMPLETED" } } } },
  ];
}
