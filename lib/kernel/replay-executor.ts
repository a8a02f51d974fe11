/**
 * The `AgentExecutor` of the replay kernel: each turn replays a list of
 * fixture lines onto the task's event bus, with their recorded delays.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { Message, Task, type Part } from "@a2a-js/sdk";
import { AgentEvent, type AgentExecutor, type ExecutionEventBus, type RequestContext } from "@a2a-js/sdk/server";
import type { FixtureErrors } from "./fixture-errors.js";
import { frameKey, listFixtures, loadFixture, selectFixture, type FixtureLine } from "./fixtures.js";
import { toLiveEvent, type LiveIds } from "./live-event.js";

export interface ReplayTurn {
  /** The user message's text parts, concatenated and trimmed. */
  text: string;
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
}

const userText = (parts: readonly Part[]) =>
  parts
    .map((part) => (part.content?.$case === "text" ? part.content.value : ""))
    .join("")
    .trim();

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
    try {
      const lines = await this.linesFor({
        ...ids,
        text: userText(ctx.userMessage.parts),
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
    const ids = { taskId, contextId: this.contextIds.get(taskId) ?? "" };
    const status = { state: "TASK_STATE_CANCELED", timestamp: new Date().toISOString() };
    bus.publish(toLiveEvent({ statusUpdate: { status } }, ids));
  };

  /** Stops every replay; their streams end as if the kernel went away. */
  stopAll(): void {
    this.shutdown.abort();
  }

  private async linesFor(turn: ReplayTurn): Promise<FixtureLine[]> {
    const scripted = this.options.script?.(turn);
    if (scripted) return scripted;
    const { fixturesDir } = this.options;
    return loadFixture(fixturesDir, selectFixture(turn.text, await listFixtures(fixturesDir)));
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
        bus.publish(AgentEvent.task(ctx.task ?? Task.fromJSON({ ...idsAsTask(ids), status: { state: "TASK_STATE_SUBMITTED" } })));
      }
      started = true;
      bus.publish(toLiveEvent(line.frame, ids));
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
