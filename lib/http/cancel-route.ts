/**
 * `POST /{executionId}/cancel` under `/extensions/iac-code/v1/executions`
 * (R-HTTP-3). The body is validated by `schemas/cancel-request.schema.json`;
 * the work is `cancelExecution`, through the thread's active run when there
 * is one, else under the thread's lease, else, when another instance's run
 * holds the thread (a shared store), through the kernel alone: that run
 * sees its task cancelled and ends the execution itself.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import express, { type RequestHandler } from "express";
import type { A2AClient } from "../a2a/client.js";
import { AguiError } from "../errors.js";
import { SCHEMAS_DIR } from "../paths.js";
import type { ThreadStore } from "../state/thread-store.js";
import { acquireThread, loadThread } from "../threads/load-thread.js";
import { cancelExecution, type CancellableThread } from "../threads/cancel-execution.js";
import { endExecution } from "../threads/thread-transitions.js";
import type { ThreadRun } from "../threads/thread-run.js";
import { jsonBody, MAX_CONTROL_BODY_BYTES } from "./json-body.js";

const validateBody = new Ajv2020({ strict: true }).compile<{ threadId: string; rosInvocationId: string }>(
  JSON.parse(readFileSync(path.join(SCHEMAS_DIR, "cancel-request.schema.json"), "utf8")),
);

export interface CancelRouteDependencies {
  store: ThreadStore;
  a2a: Pick<A2AClient, "cancelTask">;
  activeRuns: ReadonlyMap<string, ThreadRun>;
}

export function cancelRoute({ store, a2a, activeRuns }: CancelRouteDependencies): express.Router {
  const router = express.Router();
  const cancel: RequestHandler<{ executionId: string }> = async (req, res) => {
    if (!validateBody(req.body)) throw new AguiError("INVALID_INPUT", { reason: "cancelBody" });
    const { threadId } = req.body;
    const cancelTask = (taskId: string) => a2a.cancelTask(taskId);
    const active = activeRuns.get(threadId);
    const status = active
      ? await cancelExecution(req.params.executionId, req.body, active, cancelTask)
      : await underLease(store, threadId, (thread) => cancelExecution(req.params.executionId, req.body, thread, cancelTask));
    res.json({ executionId: req.params.executionId, status });
  };
  router.post("/:executionId/cancel", ...jsonBody(MAX_CONTROL_BODY_BYTES), cancel);
  return router;
}

/** The thread loaded under its lease, with `end()` saving the ended execution. */
async function underLease<T>(
  store: ThreadStore,
  threadId: string,
  work: (thread: CancellableThread | undefined) => Promise<T>,
): Promise<T> {
  const lease = await acquireThread(store, threadId);
  if (!lease) return work(store.shared ? await heldElsewhere(store, threadId) : busy());
  try {
    let state = await loadThread(store, threadId);
    if (!state) return await work(undefined);
    const thread: CancellableThread = {
      get state() {
        return state!;
      },
      async end() {
        state = endExecution(state!);
        await store.save(state, lease);
      },
    };
    return await work(thread);
  } finally {
    await lease.release();
  }
}

const busy = (): never => {
  throw new AguiError("THREAD_BUSY");
};

/**
 * The thread as another instance's run holds it: read without the lease,
 * which that run keeps. Only its task can be cancelled from here, so an
 * execution whose task is not known yet is still THREAD_BUSY.
 */
async function heldElsewhere(store: ThreadStore, threadId: string): Promise<CancellableThread | undefined> {
  const state = await loadThread(store, threadId);
  if (!state) return undefined;
  if (state.execution.taskId === null && !state.terminalExecutionIds.includes(state.execution.executionId)) busy();
  return { state, end: async () => {} };
}
