/**
 * Holds each thread's status read-model (see `operators/thread-status.ts`)
 * while someone cares: a run feeds it, observers watch it. A thread with no
 * active run and no observer is dropped, so memory follows what is live,
 * not how many threads exist; a later watcher starts from the thread's
 * stored state. This is the hub of one process; instances sharing a Redis
 * share it through `status-hub-redis.ts`.
 */
import { BehaviorSubject, defer, finalize, type Observable } from "rxjs";
import type { AGUIEvent } from "@ag-ui/core";
import { emptyPipelineGraph } from "../model/pipeline-graph.js";
import { initialThreadStatus, reduceThreadStatus, type ThreadStatus } from "../model/thread-status.js";
import type { ThreadState } from "../state/thread-state.js";

interface Entry {
  status: BehaviorSubject<ThreadStatus>;
  watchers: number;
}

/** The status a thread's stored state implies when no run is feeding one. */
export function statusFromState(state: ThreadState): ThreadStatus {
  return {
    ...initialThreadStatus(state.threadId),
    pendingInterrupts: Object.values(state.execution.pending).map(({ value }) => ({
      id: value.inputId,
      reason: value.kind === "permission" ? "tool_call" : "input_required",
      kind: typeof value.kind === "string" ? value.kind : null,
    })),
    pipeline: { sequence: state.execution.pipelineSequence, lastEventType: null },
    // A paused execution keeps the graph its run drew; the hub forgot it when the run ended.
    pipelineGraph: state.execution.pipelineGraph ?? emptyPipelineGraph(),
  };
}

/** What runs feed and observers watch, in one process or across instances. */
export interface ThreadStatusHub {
  /**
   * One event of one of the thread's runs. `seed` is what a run that starts (RUN_STARTED) builds on when
   * nobody holds a status for the thread: a resumed run goes on from the graph its paused execution kept.
   */
  record(threadId: string, event: AGUIEvent, seed?: () => ThreadStatus): void;
  /** The thread's status now and on every change, for as long as the watcher stays; `seed` when no run feeds one. */
  watch(threadId: string, seed: () => ThreadStatus): Observable<ThreadStatus>;
}

export class LocalThreadStatusHub implements ThreadStatusHub {
  readonly #threads = new Map<string, Entry>();

  #entry(threadId: string, seed: () => ThreadStatus): Entry {
    let entry = this.#threads.get(threadId);
    if (!entry) {
      entry = { status: new BehaviorSubject(seed()), watchers: 0 };
      this.#threads.set(threadId, entry);
    }
    return entry;
  }

  #dropIfIdle(threadId: string, entry: Entry): void {
    if (entry.watchers === 0 && !entry.status.value.runActive && this.#threads.get(threadId) === entry) this.#threads.delete(threadId);
  }

  /** One event of one of the thread's runs. */
  record(threadId: string, event: AGUIEvent, seed: () => ThreadStatus = () => initialThreadStatus(threadId)): void {
    const entry = this.#threads.get(threadId) ?? (event.type === "RUN_STARTED" ? this.#entry(threadId, seed) : undefined);
    if (!entry) return;
    const next = reduceThreadStatus(entry.status.value, event);
    if (next !== entry.status.value) entry.status.next(next);
    this.#dropIfIdle(threadId, entry);
  }

  /** The thread's status now and on every change, for as long as the watcher stays. */
  watch(threadId: string, seed: () => ThreadStatus): Observable<ThreadStatus> {
    return defer(() => {
      const entry = this.#entry(threadId, seed);
      entry.watchers += 1;
      return entry.status.pipe(
        finalize(() => {
          entry.watchers -= 1;
          this.#dropIfIdle(threadId, entry);
        }),
      );
    });
  }

  /** Threads held now: tests and benchmarks check it does not grow with idle threads. */
  get size(): number {
    return this.#threads.size;
  }
}
