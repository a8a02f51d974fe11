/**
 * `GET /extensions/iac-code/v1/threads?limit=50`: the service's threads, the
 * most recently saved first (docs/http-api.md, "Listing threads"), for a
 * person choosing one to attach to (the sandbox's threads panel) through
 * the connect route. Each thread's status is what its stored state and its
 * lease tell: `running` while a run holds it, `paused` while interrupts
 * wait for an answer, else `idle`. The store keeps no outcome of a finished
 * run, so an error that ended one shows as `idle` here (its stream said it).
 */
import express from "express";
import { AguiError } from "../errors.js";
import { MAX_THREADS_LISTED, type ThreadSummary } from "../state/thread-listing.js";
import { StateUnavailableError, type ThreadStore } from "../state/thread-store.js";

export const DEFAULT_THREADS_LISTED = 50;

export type ListedThreadStatus = "running" | "paused" | "idle";

export interface ListedThread {
  threadId: string;
  status: ListedThreadStatus;
  /** ISO 8601 with `Z`; null when the store cannot tell (a state saved before it kept the time). */
  updatedAt: string | null;
  pendingInterrupts: number;
}

const statusOf = (thread: ThreadSummary): ListedThreadStatus =>
  thread.running ? "running" : thread.pendingInterrupts > 0 ? "paused" : "idle";

/** `limit` as asked, brought within 1…MAX_THREADS_LISTED; anything not a whole number is the default. */
export function listLimit(value: unknown): number {
  const asked = typeof value === "string" && /^\d{1,6}$/.test(value) ? Number(value) : DEFAULT_THREADS_LISTED;
  return Math.min(Math.max(asked, 1), MAX_THREADS_LISTED);
}

export function threadListRoute(store: Pick<ThreadStore, "listThreads">): express.Router {
  const router = express.Router();
  router.get("/", async (req, res) => {
    // A store that cannot list (an embedder's own) answers an empty list rather than a 404: there is nothing to show.
    let threads: ThreadSummary[];
    try {
      threads = (await store.listThreads?.(listLimit(req.query.limit))) ?? [];
    } catch (error) {
      if (error instanceof StateUnavailableError) throw new AguiError("STATE_UNAVAILABLE", {}, { cause: error });
      throw error;
    }
    const listed: ListedThread[] = threads.map((thread) => ({
      threadId: thread.threadId,
      status: statusOf(thread),
      updatedAt: thread.updatedAt > 0 ? new Date(thread.updatedAt).toISOString() : null,
      pendingInterrupts: thread.pendingInterrupts,
    }));
    res.set("Cache-Control", "no-store").json({ threads: listed });
  });
  return router;
}
