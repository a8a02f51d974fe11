/**
 * A plain A2A 1.0 kernel on `@a2a-js/sdk` that plays a recorded turn one
 * frame at a time, each frame only when the test lets it: `playTo(n)`
 * publishes frames up to the n-th and answers once they are out. It has
 * no pipeline recovery route and nothing of the demo kernel's: what an
 * observer learns of a run it attached to late comes from the service's
 * thread status and from the task's live events, as in front of any
 * kernel that speaks A2A and nothing more.
 *
 * It answers the cold-resume preflight (contract §5) with `current`, as a
 * kernel that never restarted does: the recorded turns name a session, and
 * a resume asks for it before it answers.
 *
 * Later turns (the answers to a pause) play the frames given for them, in
 * turn order, counted on from the turns before: `playTo` counts every
 * frame of every turn.
 *
 * `subscribed(n)` answers once n `SubscribeToTask` streams are listening:
 * the SDK has their queue on the task's bus before it sends the task
 * snapshot, so a frame published after it reaches every one of them.
 */
import { readFileSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import { AgentCard, StreamResponse, TaskState } from "@a2a-js/sdk";
import {
  DefaultRequestHandler,
  InMemoryTaskStore,
  type AgentExecutionEvent,
  type AgentExecutor,
  type ExecutionEventBus,
} from "@a2a-js/sdk/server";
import { jsonRpcHandler, UserBuilder } from "@a2a-js/sdk/server/express";
import express from "express";
import { closeKernel, listenKernel } from "../../lib/kernel/replay-kernel.js";
import { ENSURE_RESTORED_PATH } from "../../lib/kernel/session-restore.js";
import { fillPlaceholders } from "../../lib/fixtures/placeholders.js";
import { parseFixture } from "../../lib/fixtures/fixture-format.js";
import { FIXTURES_DIR } from "../../lib/paths.js";

/** A recorded fixture's turn (the first, or the section played for an answer containing `when`): the frames the kernel plays. */
export function recordedTurn(name: string, when?: string): unknown[] {
  const sections = parseFixture(readFileSync(path.join(FIXTURES_DIR, `${name}.jsonl`), "utf8"), name);
  const turn = when === undefined ? sections[0] : sections.find((section) => section.when?.includes(when));
  return turn!.lines.flatMap((line) => (line.frame === undefined ? [] : [line.frame]));
}

export interface StepKernel {
  url: string;
  /** Lets the running turn publish its frames before the `count`-th; answers once they are published. */
  playTo(count: number): Promise<void>;
  /** Answers once `count` SubscribeToTask streams listen to the task's events. */
  subscribed(count: number): Promise<void>;
  close(): Promise<void>;
}

/** A promise with its resolve at hand, for a condition some later call makes true. */
class Waits {
  readonly #waiting: Array<{ met: () => boolean; resolve: () => void }> = [];
  until(met: () => boolean): Promise<void> {
    if (met()) return Promise.resolve();
    return new Promise((resolve) => this.#waiting.push({ met, resolve }));
  }
  check(): void {
    for (const wait of this.#waiting.filter(({ met }) => met())) {
      this.#waiting.splice(this.#waiting.indexOf(wait), 1);
      wait.resolve();
    }
  }
}

function publish(bus: ExecutionEventBus, wire: unknown) {
  const { payload } = StreamResponse.fromJSON(wire);
  bus.publish({ kind: payload!.$case, data: payload!.value } as AgentExecutionEvent);
}

/**
 * Plays `frames` (a recorded turn, with `${taskId}` and `${contextId}` placeholders) on the first message it gets,
 * and each of `laterTurns` on the message after.
 */
export async function startStepKernel(frames: readonly unknown[], ...laterTurns: ReadonlyArray<readonly unknown[]>): Promise<StepKernel> {
  const waits = new Waits();
  const turns = [frames, ...laterTurns];
  const frameCount = turns.reduce((count, turn) => count + turn.length, 0);
  let turnsStarted = 0;
  let allowed = 0;
  let published = 0;
  let listening = 0;

  const executor: AgentExecutor = {
    execute: async (context, bus) => {
      const ids = { taskId: context.taskId, contextId: context.contextId };
      // The SDK takes a turn only from a Task first: an answer's turn starts from the stored task, working again.
      if (context.task)
        bus.publish({
          kind: "task",
          data: { ...context.task, status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: undefined } },
        });
      for (const frame of turns[turnsStarted++] ?? []) {
        await waits.until(() => published < allowed);
        publish(bus, fillPlaceholders(frame, ids));
        published++;
        waits.check();
      }
      bus.finished();
    },
    // Nothing here runs between turns: a cancel is answered at once.
    cancelTask: async (taskId, bus) => {
      publish(bus, { statusUpdate: { taskId, contextId: "", status: { state: "TASK_STATE_CANCELED" } } });
      bus.finished();
    },
  };

  class CountingHandler extends DefaultRequestHandler {
    override async *resubscribe(...args: Parameters<DefaultRequestHandler["resubscribe"]>) {
      let first = true;
      for await (const item of super.resubscribe(...args)) {
        if (first) {
          first = false;
          listening++;
          waits.check();
        }
        yield item;
      }
    }
  }

  const card = AgentCard.fromJSON({
    name: "step kernel",
    description: "plays a recorded turn frame by frame",
    version: "1",
    supportedInterfaces: [{ url: "http://127.0.0.1/", protocolBinding: "JSONRPC", protocolVersion: "1.0" }],
    capabilities: { streaming: true },
    defaultInputModes: ["text/plain"],
    defaultOutputModes: ["text/plain"],
    skills: [],
  });
  const handler = new CountingHandler(card, new InMemoryTaskStore(), executor);
  const app = express();
  app.use(express.json({ limit: "16mb" }));
  app.post(ENSURE_RESTORED_PATH, (_request, response) => void response.json({ status: "current" }));
  app.use(jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  const { server, url }: { server: http.Server; url: string } = await listenKernel(app, {});
  card.supportedInterfaces[0]!.url = url;

  return {
    url,
    playTo(count) {
      allowed = Math.max(allowed, count);
      waits.check();
      return waits.until(() => published >= Math.min(count, frameCount));
    },
    subscribed: (count) => waits.until(() => listening >= count),
    close: () => {
      allowed = frameCount;
      waits.check();
      return closeKernel(server);
    },
  };
}
