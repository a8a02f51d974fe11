/**
 * A plain A2A 1.0 kernel on `@a2a-js/sdk` that plays a recorded turn one
 * frame at a time, each frame only when the test lets it: `playTo(n)`
 * publishes frames up to the n-th and answers once they are out. It has
 * no pipeline recovery route and nothing of the demo kernel's: what an
 * observer learns of a run it attached to late comes from the service's
 * thread status and from the task's live events, as in front of any
 * kernel that speaks A2A and nothing more.
 *
 * `subscribed(n)` answers once n `SubscribeToTask` streams are listening:
 * the SDK has their queue on the task's bus before it sends the task
 * snapshot, so a frame published after it reaches every one of them.
 */
import http from "node:http";
import { AgentCard, StreamResponse } from "@a2a-js/sdk";
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
import { fillPlaceholders } from "../../lib/fixtures/placeholders.js";

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

/** Plays `frames` (a recorded turn, with `${taskId}` and `${contextId}` placeholders) on the first message it gets. */
export async function startStepKernel(frames: readonly unknown[]): Promise<StepKernel> {
  const waits = new Waits();
  let allowed = 0;
  let published = 0;
  let listening = 0;

  const executor: AgentExecutor = {
    execute: async (context, bus) => {
      const ids = { taskId: context.taskId, contextId: context.contextId };
      for (const frame of frames) {
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
  app.use(jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  const { server, url }: { server: http.Server; url: string } = await listenKernel(app, {});
  card.supportedInterfaces[0]!.url = url;

  return {
    url,
    playTo(count) {
      allowed = Math.max(allowed, count);
      waits.check();
      return waits.until(() => published >= Math.min(count, frames.length));
    },
    subscribed: (count) => waits.until(() => listening >= count),
    close: () => {
      allowed = frames.length;
      waits.check();
      return closeKernel(server);
    },
  };
}
