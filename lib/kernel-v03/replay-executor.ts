/**
 * The `AgentExecutor` of the A2A 0.3 replay kernel: each turn of a task
 * replays fixture lines (`examples/fixtures-v03/`) onto the task's event bus
 * with their recorded delays, as a stock 0.3 agent on `@a2a-js/sdk` 0.3
 * publishes its events. A task's first turn picks the fixture; an answer to
 * its `input-required` plays that fixture's section for the next turn.
 *
 * Unlike the 1.0 kernel it keeps no iac-code state (pending inputs,
 * pipeline, history): an agent without iac-code metadata has none, and the
 * SDK's own request handler does the rest (a parked task's cancel, GetTask,
 * resubscribe).
 */
import type { IncomingHttpHeaders } from "node:http";
import type { Message, Task } from "a2a-sdk-v03";
import {
  UnauthenticatedUser,
  type AgentExecutionEvent,
  type AgentExecutor,
  type ExecutionEventBus,
  type RequestContext,
} from "a2a-sdk-v03/server";
import { FixtureFormatError, sectionFor, type FixtureLine } from "../fixtures/fixture-format.js";
import type { LiveIds } from "../fixtures/placeholders.js";
import { listFixtures, loadFixture, selectFixture } from "../kernel/fixtures.js";
import type { HoldLine, ReplayTurn } from "../kernel/replay-executor.js";
import { ReplayTiming } from "../kernel/replay-timing.js";
import type { StreamDrops } from "../kernel/stream-drops.js";
import { answerText, frameKind, toLiveEvent, userText, V03_FRAMES } from "./frames.js";

/** The fixture a message that names none plays. */
export const DEFAULT_FIXTURE_V03 = "plain-chat";

/**
 * The user of a JSON-RPC call, carrying the call's request headers: the 0.3
 * SDK's call context has no other link back to the HTTP request, and a
 * `drop` line must find the response to cut (`StreamDrops`).
 */
export class CallUser extends UnauthenticatedUser {
  constructor(readonly headers: IncomingHttpHeaders) {
    super();
  }
}

export interface ReplayExecutorV03Options {
  fixturesDir: string;
  holdLine?: HoldLine | undefined;
  /** Multiplies every delayMs. */
  timeScale: number;
  drops: StreamDrops;
}

/** What one `execute()` call has sent on its bus so far. */
interface CallProgress {
  /** Events published: what a `drop` line waits to see written. */
  published: number;
  /** Whether an event that ends the SDK's stream (a message, a final status) went out. */
  streamEnded: boolean;
}

export class ReplayExecutorV03 implements AgentExecutor {
  private readonly replays = new Map<string, AbortController>();
  // A task that no longer plays (parked on input-required) still needs its context id in its CANCELED status.
  private readonly contextIds = new Map<string, string>();
  private readonly turnCounts = new Map<string, number>();
  private readonly fixtureNames = new Map<string, string>();
  private readonly shutdown = new AbortController();
  private readonly timing: ReplayTiming;

  constructor(private readonly options: ReplayExecutorV03Options) {
    this.timing = new ReplayTiming(options);
  }

  execute = async (ctx: RequestContext, bus: ExecutionEventBus): Promise<void> => {
    const ids: LiveIds = { taskId: ctx.taskId, contextId: ctx.contextId };
    const replay = new AbortController();
    this.replays.get(ids.taskId)?.abort();
    this.replays.set(ids.taskId, replay);
    this.contextIds.set(ids.taskId, ids.contextId);
    const turnIndex = this.turnCounts.get(ids.taskId) ?? 0;
    this.turnCounts.set(ids.taskId, turnIndex + 1);
    const turn: ReplayTurn = {
      ...ids,
      text: userText(ctx.userMessage),
      answer: answerText(ctx.userMessage),
      message: ctx.userMessage,
      turnIndex,
    };
    try {
      const lines = await this.linesFor(turn).catch(fixtureFailure);
      await this.replay(lines, turn, ctx, bus, AbortSignal.any([replay.signal, this.shutdown.signal]));
    } finally {
      if (this.replays.get(ids.taskId) === replay) this.replays.delete(ids.taskId);
    }
  };

  /**
   * Stops the task's replay and publishes the CANCELED status the SDK waits
   * for. A task parked in input-required has no event bus left, so the SDK
   * cancels it without asking the executor.
   */
  cancelTask = async (taskId: string, bus: ExecutionEventBus): Promise<void> => {
    this.replays.get(taskId)?.abort();
    bus.publish({
      kind: "status-update",
      taskId,
      contextId: this.contextIds.get(taskId) ?? "",
      status: { state: "canceled", timestamp: this.timing.statusTime() },
      final: true,
    });
  };

  /** Stops every replay; their streams end as if the kernel went away. */
  stopAll(): void {
    this.shutdown.abort();
  }

  private async linesFor(turn: ReplayTurn): Promise<FixtureLine[]> {
    const { fixturesDir } = this.options;
    const name = this.fixtureNames.get(turn.taskId) ?? selectFixture(turn.text, await listFixtures(fixturesDir), DEFAULT_FIXTURE_V03);
    this.fixtureNames.set(turn.taskId, name);
    const sections = await loadFixture(fixturesDir, name, V03_FRAMES);
    if (sections.some((section) => section.lines.some((line) => line.error))) {
      // A 0.3 agent's run that goes wrong ends `failed`; a JSON-RPC error mid-stream is a 1.0 kernel's way.
      throw new FixtureFormatError(`${name}: an A2A 0.3 fixture has no "error" lines; end the task "failed" instead`);
    }
    return sectionFor(sections, turn.turnIndex, turn.answer)?.lines ?? noSectionReply(name, turn.turnIndex);
  }

  private async replay(
    lines: FixtureLine[],
    turn: ReplayTurn,
    ctx: RequestContext,
    bus: ExecutionEventBus,
    signal: AbortSignal,
  ): Promise<void> {
    const ids = { taskId: ctx.taskId, contextId: ctx.contextId };
    const progress: CallProgress = { published: 0, streamEnded: false };
    const publish = (event: AgentExecutionEvent) => {
      if (event.kind === "task" || event.kind === "status-update") event.status.timestamp = this.timing.statusTime();
      if (event.kind === "message" || (event.kind === "status-update" && event.final)) progress.streamEnded = true;
      bus.publish(event);
      progress.published++;
    };
    for (const [index, line] of lines.entries()) {
      if (!(await this.timing.wait(line.delayMs, signal))) return;
      if (!(await this.timing.hold(turn, index, lines.length, signal))) return;
      // A new task's stream opens with the task, as the SDK's own agents do; a later turn goes on from the stored one,
      // and an answer that is one message alone has no task.
      if (index === 0 && !ctx.task && (line.drop || !["task", "message"].includes(frameKind(line.frame)!))) {
        publish(newTask(ids, ctx.userMessage));
      }
      if (line.drop) {
        // A stream the SDK already ended has nothing left to cut.
        const headers = ctx.context?.user instanceof CallUser ? ctx.context.user.headers : undefined;
        if (!progress.streamEnded) await this.options.drops.cutRequest(headers, progress.published, signal);
        continue;
      }
      const event = toLiveEvent(line.frame, ids);
      if (event.kind === "task") event.history ??= [ctx.userMessage];
      publish(event);
    }
  }
}

function newTask(ids: LiveIds, userMessage: Message): Task {
  return { kind: "task", id: ids.taskId, contextId: ids.contextId, status: { state: "submitted" }, history: [userMessage] };
}

/**
 * A fixture that cannot be read fails the task with the reason, on the
 * task's own ids: left to the SDK, a rejected `execute` fails a task id it
 * makes up.
 */
function fixtureFailure(error: unknown): FixtureLine[] {
  if (!(error instanceof FixtureFormatError)) throw error;
  return finalStatusLine("failed", "fixture-error", `The demo kernel cannot play this fixture: ${error.message}`);
}

/** A turn the fixture has nothing for: a short answer, and the task completes. */
function noSectionReply(fixture: string, turnIndex: number): FixtureLine[] {
  const text = `The demo fixture \`${fixture}\` has nothing recorded for turn ${turnIndex}, so this task ends here. Send a fixture name as a new message to try another scenario.`;
  return finalStatusLine("completed", "end", text);
}

/** A fixture line that ends the task in `state` with an agent message saying `text`. */
function finalStatusLine(state: "failed" | "completed", messageIdSuffix: string, text: string): FixtureLine[] {
  const message = {
    kind: "message",
    messageId: `\${taskId}-${messageIdSuffix}`,
    role: "agent",
    parts: [{ kind: "text", text }],
    taskId: "${taskId}",
    contextId: "${contextId}",
  };
  return [{ delayMs: 0, frame: { kind: "status-update", status: { state, message }, final: true } }];
}
