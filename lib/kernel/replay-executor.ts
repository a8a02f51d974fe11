/**
 * The `AgentExecutor` of the replay kernel: each turn replays a list of
 * fixture lines onto the task's event bus, with their recorded delays. A
 * task's first turn picks the fixture; its later turns (answers to an
 * interrupt, guidance) play that fixture's section for the turn.
 *
 * Along the way it notes what the task waits for (`PendingInputs`), the
 * pipeline envelopes it publishes (`PipelineLog`, for the recovery route)
 * and what the task said (`TaskHistory`, for its history), stamps each
 * status with the time it is published, cuts the call's stream at a `drop` line (`StreamDrops`), and plays a
 * sideband answer that arrived while it ran as the next turn, after its
 * own lines (`continueAfterReplay`).
 */
import { Message, Task, TaskState, type Part } from "@a2a-js/sdk";
import { AgentEvent, type AgentExecutionEvent, type AgentExecutor, type ExecutionEventBus, type RequestContext } from "@a2a-js/sdk/server";
import type { FixtureErrors } from "./fixture-errors.js";
import { frameKey, sectionFor, type FixtureLine } from "../fixtures/fixture-format.js";
import type { LiveIds } from "../fixtures/placeholders.js";
import { listFixtures, loadFixture, selectFixture } from "./fixtures.js";
import { isTerminal, permissionAnswerOf, withWaiting, type PendingInputs } from "./interrupts.js";
import { FixturePlays, withFreshToolIds } from "./fresh-tool-ids.js";
import { toLiveEvent } from "./live-event.js";
import type { PipelineLog } from "./pipeline-state.js";
import { ReplayTiming } from "./replay-timing.js";
import type { StreamDrops } from "./stream-drops.js";
import type { TaskHistory } from "./task-history.js";

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

/**
 * Tests: a promise to wait on before a turn plays one of its lines, or
 * undefined to play it after its delay as usual. A test that needs a task
 * still running when it acts holds the last line until it has acted,
 * instead of betting on the fixture's delays outlasting a loaded machine.
 */
export type HoldLine = (turn: ReplayTurn, lineIndex: number, lineCount: number) => Promise<void> | undefined;

export interface ReplayExecutorOptions {
  fixturesDir: string;
  script?: ReplayScript | undefined;
  holdLine?: HoldLine | undefined;
  timeScale: number;
  errors: FixtureErrors;
  pending: PendingInputs;
  drops: StreamDrops;
  pipeline: PipelineLog;
  /** What each task said, for its history (see `task-history.ts`). */
  history: TaskHistory;
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

/** What one `execute()` call has sent on its bus so far. */
interface CallProgress {
  /** Whether the turn's first event (a Task) went out. */
  started: boolean;
  /** Events published: what a `drop` line waits to see written. */
  published: number;
  /** Whether an event that ends the SDK's stream (a Message, a terminal or input-required status) went out. */
  streamEnded: boolean;
}

const STREAM_END_STATES: readonly TaskState[] = [TaskState.TASK_STATE_INPUT_REQUIRED];

// After these, a task takes no continuation: it ended, or waits for a streamed answer.
const NO_CONTINUATION_STATES: readonly TaskState[] = [TaskState.TASK_STATE_INPUT_REQUIRED, TaskState.TASK_STATE_AUTH_REQUIRED];

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
  /** Each task's tool id suffix: fresh ids for a fixture a context plays again (`fresh-tool-ids.ts`). */
  private readonly toolIdSuffixes = new Map<string, string>();
  private readonly fixturePlays = new FixturePlays();
  /** The state of the last status (or Task) each task published. */
  private readonly states = new Map<string, TaskState>();
  /** Sideband answers to play as the next turn once the task's running replay has played its lines. */
  private readonly continuations = new Map<string, Message>();
  private readonly shutdown = new AbortController();
  private readonly timing: ReplayTiming;

  constructor(private readonly options: ReplayExecutorOptions) {
    this.timing = new ReplayTiming(options);
  }

  execute = async (ctx: RequestContext, bus: ExecutionEventBus): Promise<void> => {
    const ids: LiveIds = { taskId: ctx.taskId, contextId: ctx.contextId };
    const replay = new AbortController();
    const running = this.replays.get(ids.taskId) ?? new Set();
    this.replays.set(ids.taskId, running.add(replay));
    this.contextIds.set(ids.taskId, ids.contextId);
    const signal = AbortSignal.any([replay.signal, this.shutdown.signal]);
    const progress: CallProgress = { started: false, published: 0, streamEnded: false };
    this.takeAnswer(ctx);
    // A continuation's message, a sideband answer, is noted where it is taken (`replay-request-handler.ts`).
    this.options.history.userTurn(ids.taskId, ctx.userMessage);
    try {
      let message: Message | undefined = ctx.userMessage;
      while (message) {
        const turnIndex = this.turnCounts.get(ids.taskId) ?? 0;
        this.turnCounts.set(ids.taskId, turnIndex + 1);
        const turn = {
          ...ids,
          text: userText(message.parts),
          answer: answerText(message.parts),
          message: Message.toJSON(message),
          turnIndex,
        };
        const lines = await this.linesFor(turn);
        const played = await this.replay(lines, turn, ctx, bus, signal, progress);
        // A turn cut short (canceled, stopped, or ended by an error line) takes no continuation.
        message = played ? this.takeContinuation(ids.taskId) : undefined;
      }
    } finally {
      running.delete(replay);
      if (running.size === 0) {
        this.replays.delete(ids.taskId);
        this.continuations.delete(ids.taskId);
      }
    }
  };

  /**
   * Publishes the CANCELED status itself rather than leaving it to the
   * replay: a task parked in input-required has no replay left to do it, and
   * the SDK's `cancelTask` waits for a terminal event on the bus.
   */
  cancelTask = async (taskId: string, bus: ExecutionEventBus): Promise<void> => {
    this.replays.get(taskId)?.forEach((replay) => replay.abort());
    this.continuations.delete(taskId);
    this.options.pending.clear(taskId);
    const ids = { taskId, contextId: this.contextIds.get(taskId) ?? "" };
    const status = { state: "TASK_STATE_CANCELED", timestamp: this.timing.statusTime() };
    this.states.set(taskId, TaskState.TASK_STATE_CANCELED);
    bus.publish(toLiveEvent({ statusUpdate: { status } }, ids));
  };

  /** Stops every replay; their streams end as if the kernel went away. */
  stopAll(): void {
    this.shutdown.abort();
  }

  /**
   * A sideband answer that resolved the last thing a still-working task
   * waited for: when a replay of the task is running, the answer plays as
   * the task's next turn right after that replay's lines, on the same event
   * bus (so its stream and subscribers see it), and this returns true.
   * Returns false when no replay runs: the caller starts the turn itself.
   */
  continueAfterReplay(taskId: string, answer: Message): boolean {
    if (!this.replays.has(taskId)) return false;
    this.continuations.set(taskId, answer);
    return true;
  }

  /**
   * The continuation to play now, if any. None once the task ended, parked
   * on an input, or announced more waits since the answer (the answer to
   * those starts the next turn).
   */
  private takeContinuation(taskId: string): Message | undefined {
    const next = this.continuations.get(taskId);
    this.continuations.delete(taskId);
    if (!next) return undefined;
    const state = this.states.get(taskId);
    if (isTerminal(state) || (state !== undefined && NO_CONTINUATION_STATES.includes(state))) return undefined;
    return this.options.pending.permissions(taskId).length === 0 && !this.options.pending.input(taskId) ? next : undefined;
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
    let name = this.fixtureNames.get(turn.taskId);
    if (name === undefined) {
      const available = await listFixtures(fixturesDir);
      name = selectFixture(turn.text, available);
      // Free text in front of a folder without the default fixture (a recordings folder): say so, not ENOENT in a log.
      if (!available.includes(name)) return noFixtureReply(name, available);
    }
    this.fixtureNames.set(turn.taskId, name);
    if (!this.toolIdSuffixes.has(turn.taskId)) this.toolIdSuffixes.set(turn.taskId, this.fixturePlays.next(turn.contextId, name));
    const section = sectionFor(await loadFixture(fixturesDir, name), turn.turnIndex, turn.answer);
    const lines = section?.lines ?? noSectionReply(name, turn.turnIndex);
    return withFreshToolIds(lines, this.toolIdSuffixes.get(turn.taskId)!);
  }

  /** Plays `lines`; true when all of them played, false when the replay was stopped or hit an error line. */
  private async replay(
    lines: FixtureLine[],
    turn: ReplayTurn,
    ctx: RequestContext,
    bus: ExecutionEventBus,
    signal: AbortSignal,
    progress: CallProgress,
  ): Promise<boolean> {
    const ids = { taskId: ctx.taskId, contextId: ctx.contextId };
    const publish = (event: AgentExecutionEvent) => {
      this.stampStatus(event);
      if (event.kind === "statusUpdate") this.options.history.status(event.data);
      const state = event.kind === "task" ? event.data.status?.state : event.kind === "statusUpdate" ? event.data.status?.state : undefined;
      if (state !== undefined) this.states.set(ids.taskId, state);
      const endsStream = isTerminal(state) || (state !== undefined && STREAM_END_STATES.includes(state));
      if (event.kind === "message" || (event.kind === "statusUpdate" && endsStream)) progress.streamEnded = true;
      bus.publish(event);
      progress.published++;
    };
    for (const [index, line] of lines.entries()) {
      if (!(await this.timing.wait(line.delayMs, signal))) return false;
      if (!(await this.timing.hold(turn, index, lines.length, signal))) return false;
      if (line.error) {
        // Before any frame this is a refusal of the call; after, a broken stream.
        this.options.errors.raise(ctx.context, line.error);
        return false;
      }
      // The SDK rejects a turn whose first event is not a Task. A follow-up
      // turn starts from the stored task, as a real kernel's does.
      if (!progress.started && (line.drop || frameKey(line.frame) !== "task")) {
        const task = ctx.task ?? Task.fromJSON({ ...idsAsTask(ids), status: { state: "TASK_STATE_SUBMITTED" } });
        // Without the input this turn answers (a sideband SendMessage returns this very event).
        publish(AgentEvent.task(withWaiting(task, this.options.pending)));
      }
      progress.started = true;
      if (line.drop) {
        // A stream the SDK already ended has nothing left to cut.
        if (!progress.streamEnded) await this.options.drops.cut(ctx.context, progress.published, signal);
        continue;
      }
      const event = toLiveEvent(line.frame, ids);
      if (event.kind === "statusUpdate") {
        // Noted before publishing: the client may answer, or recover, as soon as it sees the status.
        this.options.pending.noteStatus(ids.taskId, event.data.status?.state, event.data.metadata);
        this.options.pipeline.record(ids, event.data.metadata);
      }
      publish(event.kind === "task" ? AgentEvent.task(withWaiting(event.data, this.options.pending)) : event);
    }
    return !signal.aborted;
  }

  /**
   * A status gets the time it is published, as a real kernel's statuses do
   * (a recorded one, replayed, is stale): `ListTasks` orders a context's
   * tasks by it, and a task's history goes up to its stored status's time
   * (see `task-history.ts`).
   */
  private stampStatus(event: AgentExecutionEvent): void {
    const status = event.kind === "task" || event.kind === "statusUpdate" ? event.data.status : undefined;
    if (status) status.timestamp = this.timing.statusTime();
  }
}

const idsAsTask = (ids: LiveIds) => ({ id: ids.taskId, contextId: ids.contextId });

/** At most this many fixture names are listed in a reply: a recordings folder may hold hundreds. */
const MAX_NAMES_LISTED = 20;

/**
 * A message that names no fixture, in front of a folder without `fallback`
 * (`chat` by default: a recorder's folder has none): the task fails with a
 * status message that says why and what the folder has, which the service
 * shows as the RUN_ERROR's detail.
 */
export function noFixtureReply(fallback: string, available: readonly string[]): FixtureLine[] {
  const listed = available.slice(0, MAX_NAMES_LISTED).join(", ");
  const more = available.length > MAX_NAMES_LISTED ? ` and ${available.length - MAX_NAMES_LISTED} more` : "";
  const has = available.length === 0 ? "it has no fixtures at all" : `it has: ${listed}${more}`;
  const text =
    `No fixture for this text: a message that is not a fixture name plays \`${fallback}\`, and the demo kernel's ` +
    `fixtures folder has no ${fallback}.jsonl (${has}). Send one of those names, or add ${fallback}.jsonl.`;
  const message = { messageId: "${taskId}-error", role: "ROLE_AGENT", parts: [{ text }], taskId: "${taskId}", contextId: "${contextId}" };
  return [{ delayMs: 0, frame: { statusUpdate: { status: { state: "TASK_STATE_FAILED", message } } } }];
}

/** A turn the fixture has no section for: a short answer, and the task completes. */
export function noSectionReply(fixture: string, turnIndex: number): FixtureLine[] {
  const text = `The demo fixture \`${fixture}\` has nothing recorded for turn ${turnIndex}, so this task ends here. Send a fixture name as a new message to try another scenario.`;
  const message = { messageId: "${taskId}-message", role: "ROLE_AGENT", parts: [{ text }], taskId: "${taskId}", contextId: "${contextId}" };
  return [
    { delayMs: 0, frame: { statusUpdate: { status: { state: "TASK_STATE_WORKING", message } } } },
    { delayMs: 0, frame: { statusUpdate: { status: { state: "TASK_STATE_COMPLETED" } } } },
  ];
}
