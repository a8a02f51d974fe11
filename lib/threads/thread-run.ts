/**
 * One run's hold on its thread: the thread state under the run's lease, and
 * every change the run makes to it, persisted in order. The run pipeline
 * calls in at the moments that matter — a task or session id learned, the
 * run pausing at interrupts, the run ending — and the rule of R-PER-4 holds
 * here: nothing is announced as recoverable before it is on disk.
 */
import type { Interrupt } from "@ag-ui/core";
import { AguiError } from "../errors.js";
import type { PendingInput, ThreadState } from "../state/thread-state.js";
import type { ThreadLease, ThreadStore } from "../state/thread-store.js";
import type { KernelInput, SignalOf } from "../model/kernel-signal.js";
import type { PipelineGraph } from "../model/pipeline-graph.js";
import { boundedPipelineGraph } from "../state/stored-pipeline-graph.js";
import { endExecution, hasPending } from "./thread-transitions.js";
import { jsonBytes, MAX_SHOWN_INTERRUPTS_BYTES } from "./interrupt-sizes.js";

/** What a failed write was recording, when the message can say it (`STATE_PERSISTENCE_FAILED.<reason>`). */
type PersistedWhat = "taskMapping" | "sessionMapping" | "acceptedAnswer";

/** Settles in the event loop's next check phase, once the I/O and writes of this turn are done. */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export interface ThreadRunOptions {
  store: ThreadStore;
  lease: ThreadLease;
  /** Interrupt time to live; 0 disables expiry. */
  interruptTtlS: number;
  now: () => number;
  /** Keeps the allowlisted fields of a kernel projection and gives it an id. */
  keepInput: (projection: Record<string, unknown>) => PendingInput["value"];
  toInterrupt: (pending: PendingInput) => Interrupt;
  /** Called once the lease is back. */
  onClosed?: () => void;
  /**
   * The admission's write of `state`, when still under way (`admission.ts`):
   * every change waits for it, and a failed one fails them all, so nothing
   * is written over a thread whose run was never recorded.
   */
  admitted?: Promise<void>;
}

/** Where a paused run stands, for the run that resumes it. */
export interface ResumePoint {
  textDigests?: readonly string[];
  pipelineSequence?: number;
  openSteps?: readonly string[];
  /** The graph the run's events drew up to the pause: kept for a view that attaches while it waits. */
  pipelineGraph?: PipelineGraph;
}

interface IdWriting {
  id: string;
  written: Promise<void>;
}

/** When a change is written: `laterTurn`, not before this turn of the event loop has ended; `offLoop`, see `SaveOptions`. */
interface CommitWhen {
  laterTurn?: boolean;
  offLoop?: boolean;
}

export class ThreadRun {
  #state: ThreadState;
  /** Persistence in order: each change waits for the one before. */
  #queue: Promise<unknown> = Promise.resolve();
  #paused = false;
  #released = false;
  /** The execution's end is on disk already: closing has nothing left to write. */
  #ended = false;
  /** The client left but may come back (grace window): the execution stays open for now. */
  #keptOpen = false;
  /** The admission's write while it is under way; undefined once it has committed. */
  #admission: Promise<void> | undefined;
  #admissionFailure: AguiError | undefined;
  /** Nothing but the admission's write is in the queue yet: the next change may be prepared beside it. */
  #queueIsAdmission = false;
  /**
   * The task and session ids being written: every frame names its task, and
   * frames go on while the first write is under way; they wait for that
   * write rather than ask for another. Two fields, not a Map: a Map keeps
   * its table after its entries went, for as long as the run is open.
   */
  readonly #idsWriting: Record<"task" | "session", IdWriting | undefined> = { task: undefined, session: undefined };
  /** The task the kernel named for this execution, written down or not (yet): what a cancel must reach. */
  #announcedTaskId: string | undefined;

  constructor(
    state: ThreadState,
    private readonly options: ThreadRunOptions,
  ) {
    this.#state = state;
    if (options.admitted) {
      this.#admission = options.admitted.then(
        () => void (this.#admission = undefined),
        (error: unknown) => {
          this.#admissionFailure = error instanceof AguiError ? error : new AguiError("STATE_UNAVAILABLE", {}, { cause: error });
          throw this.#admissionFailure;
        },
      );
      this.#queue = this.#admission.catch(() => undefined);
      this.#queueIsAdmission = true;
    }
  }

  /**
   * Pending while the admission's write is under way (rejecting if it
   * fails), undefined once it is on disk: the run holds the kernel's events
   * on it, so nothing the kernel says is told before the run is recorded.
   */
  get admissionWrite(): Promise<void> | undefined {
    return this.#admissionFailure ? Promise.reject(this.#admissionFailure) : this.#admission;
  }

  get state(): ThreadState {
    return this.#state;
  }

  /**
   * The execution's task: as stored, else as the kernel named it while its
   * write goes on (or after it failed). The run shows the kernel's text
   * meanwhile, so a run that fails then still cancels its task by id.
   */
  get taskIdToCancel(): string | null {
    return this.#state.execution.taskId ?? this.#announcedTaskId ?? null;
  }

  /**
   * Settles once every change asked for so far is written (or has failed):
   * the ids the run's stream may already have shown the kernel's words for
   * are written beside it (`persistIdsAside`), and a view that attaches by
   * thread id must find them on disk, not a thread at rest.
   */
  get changesWritten(): Promise<void> {
    return this.#queue.then(() => undefined);
  }

  /** True once the run has durably paused at interrupts: a disconnect must not cancel the task then. */
  get paused(): boolean {
    return this.#paused;
  }

  isAnswered = (interruptId: string): boolean =>
    this.#state.appliedResumeDigests.some(
      (applied) => applied.executionId === this.#state.execution.executionId && applied.interruptId === interruptId,
    );

  /** Runs `change` after every earlier change, and persists its result, `when` it says. */
  #commit(change: (state: ThreadState) => ThreadState, when: CommitWhen = {}): Promise<void> {
    const next =
      this.#queueIsAdmission && this.#admission ? this.#commitBesideAdmission(change, this.#admission) : this.#commitInTurn(change, when);
    this.#queueIsAdmission = false;
    this.#queue = next.catch(() => undefined);
    return next;
  }

  #commitInTurn(change: (state: ThreadState) => ThreadState, { laterTurn, offLoop }: CommitWhen): Promise<void> {
    return (laterTurn ? this.#queue.then(nextTurn) : this.#queue).then(async () => {
      if (this.#admissionFailure) throw this.#admissionFailure;
      const state = change(this.#state);
      if (state === this.#state) return;
      await this.options.store.save(state, this.options.lease, offLoop ? { offLoop } : undefined);
      this.#state = state;
    });
  }

  /**
   * The first change while the admission's write is still under way (the
   * task's id, most often, which the run's first events wait for): the state
   * it changes is the admitted one already, so the store prepares the write
   * at once and puts it in place after the admission's, or not at all if
   * that fails. The order on disk, and what waits for what, are as in turn.
   */
  async #commitBesideAdmission(change: (state: ThreadState) => ThreadState, admission: Promise<void>): Promise<void> {
    const state = change(this.#state);
    if (state === this.#state) return admission;
    await this.options.store.save(state, this.options.lease, { after: admission });
    this.#state = state;
  }

  /** `reason` names what could not be written, for the message (`STATE_PERSISTENCE_FAILED.<reason>`). */
  async #commitOrFail(change: (state: ThreadState) => ThreadState, reason?: PersistedWhat, when?: CommitWhen): Promise<void> {
    try {
      await this.#commit(change, when);
    } catch (error) {
      throw error instanceof AguiError ? error : new AguiError("STATE_PERSISTENCE_FAILED", reason ? { reason } : {}, { cause: error });
    }
  }

  /**
   * The task of this execution; a different one, or a foreign context, is a
   * protocol error, thrown at once so the run ends before anything after it
   * is told. Undefined when there is nothing to write (every frame names its
   * task; only the first changes anything).
   */
  rememberTask(taskId: string, contextId: string | undefined): Promise<void> | undefined {
    const { execution } = this.#state;
    if (contextId !== undefined && contextId !== this.#state.contextId) {
      throw new AguiError("A2A_PROTOCOL_ERROR", { reason: "contextChanged" });
    }
    if (execution.taskId === taskId) return undefined;
    const writing = this.#idsWriting.task;
    if (writing?.id === taskId) return writing.written;
    if (execution.taskId !== null || writing) throw new AguiError("A2A_PROTOCOL_ERROR", { reason: "taskChanged" });
    this.#announcedTaskId = taskId;
    return this.#writeId("task", taskId, () =>
      this.#commitOrFail((state) => ({ ...state, execution: { ...state.execution, taskId } }), "taskMapping", { laterTurn: true }),
    );
  }

  /**
   * The ids' writes take their place in the queue at once (a view waits for
   * them, a later change comes after them) but, once the admission is on
   * disk, begin a turn later: the
   * kernel's first frame brings the task's id with the first text, and that
   * text is written to the client within this turn, without waiting for the
   * write's preparation (its document, its temp file's trip to the thread
   * pool) on the one event loop.
   */
  #writeId(which: "task" | "session", id: string, write: () => Promise<void>): Promise<void> {
    const written = write();
    const entry = { id, written };
    this.#idsWriting[which] = entry;
    const settled = () => {
      if (this.#idsWriting[which] === entry) this.#idsWriting[which] = undefined;
    };
    written.then(settled, settled);
    return written;
  }

  /** The kernel session never changes for a thread (a change is thrown at once); undefined when there is nothing to write. */
  rememberSession(sessionId: string): Promise<void> | undefined {
    const known = this.#state.iacCodeSessionId;
    if (known === sessionId) return undefined;
    const writing = this.#idsWriting.session;
    if (writing?.id === sessionId) return writing.written;
    if (known !== null || writing) throw new AguiError("A2A_PROTOCOL_ERROR", { reason: "sessionChanged" });
    return this.#writeId("session", sessionId, () =>
      this.#commitOrFail((state) => ({ ...state, iacCodeSessionId: sessionId }), "sessionMapping", { laterTurn: true }),
    );
  }

  /**
   * Persists the inputs the run pauses on, with what a resume needs (text
   * digests, the pipeline cursor and open steps), and only then gives back
   * the interrupts to announce.
   */
  async pause(inputs: readonly KernelInput[], resumePoint: ResumePoint = {}): Promise<Interrupt[]> {
    const { textDigests = [], pipelineSequence, openSteps, pipelineGraph } = resumePoint;
    const { taskId } = this.#state.execution;
    const expiresAt =
      this.options.interruptTtlS > 0 ? new Date(this.options.now() + this.options.interruptTtlS * 1000).toISOString() : undefined;
    const added: Record<string, PendingInput> = {};
    for (const { projection, sideband } of inputs) {
      const value = this.options.keepInput(projection);
      if (value.requestTaskId !== undefined && value.requestTaskId !== taskId)
        throw new AguiError("A2A_PROTOCOL_ERROR", { reason: "interruptTask" });
      if (value.contextId !== undefined && value.contextId !== this.#state.contextId)
        throw new AguiError("A2A_PROTOCOL_ERROR", { reason: "interruptContext" });
      added[value.inputId] = { value, sideband, ...(expiresAt ? { expiresAt } : {}) };
    }
    const shownBytes = jsonBytes(Object.values({ ...this.#state.execution.pending, ...added }).map(this.options.toInterrupt));
    // Refused before anything is written, as a state too large is (see `interrupt-sizes.ts`).
    if (shownBytes > MAX_SHOWN_INTERRUPTS_BYTES)
      throw new Error(`the interrupts would be shown as ${shownBytes} bytes, more than ${MAX_SHOWN_INTERRUPTS_BYTES}`);
    await this.#commitOrFail((state) => ({
      ...state,
      execution: {
        ...(pipelineGraph ? withPausedGraph(state.execution, pipelineGraph) : state.execution),
        pending: { ...state.execution.pending, ...added },
        textSnapshotDigests: [...new Set([...state.execution.textSnapshotDigests, ...textDigests])],
        pipelineSequence: Math.max(state.execution.pipelineSequence, pipelineSequence ?? 0),
        pipelineOpenSteps: openSteps ? [...openSteps] : state.execution.pipelineOpenSteps,
        // Whose pause this is: a resume may come back under this run's id (see `admission.ts`).
        ...(state.execution.runId !== undefined ? { interruptedRunId: state.execution.runId } : {}),
      },
    }));
    this.#paused = true;
    return Object.values(this.#state.execution.pending).map(this.options.toInterrupt);
  }

  /**
   * The run's end, made durable before it is announced: a pause persists
   * its interrupts first (else the task is cancelled and the run fails,
   * R-PER-4); an end the kernel did not settle cancels the task.
   */
  async settleEnd(end: SignalOf<"run-end">, cancelTask: () => void, pipelineGraph?: PipelineGraph): Promise<SignalOf<"run-end">> {
    if (!end.kernelSettled) cancelTask();
    if (end.error) return end;
    if (!end.inputs?.length) return this.#finish(end);
    try {
      const { textDigests, pipelineSequence, openSteps } = end;
      return { ...end, interrupts: await this.pause(end.inputs, { textDigests, pipelineSequence, openSteps, pipelineGraph }) };
    } catch (error) {
      cancelTask();
      await this.end().catch(() => undefined);
      // Whatever failed to persist, the interrupts are what was lost: the message says so.
      const failure =
        error instanceof AguiError && error.code === "A2A_PROTOCOL_ERROR"
          ? error
          : new AguiError("STATE_PERSISTENCE_FAILED", { reason: "interrupts" }, { cause: error });
      return { ...end, inputs: undefined, error: failure };
    }
  }

  /**
   * A run that ends well says so only once its end is stored: a finished
   * run whose end could not be written is not told as a success, and the
   * thread is left as a crashed process leaves it (see `orphans.ts`).
   */
  async #finish(end: SignalOf<"run-end">): Promise<SignalOf<"run-end">> {
    let ending = false;
    try {
      // Runs end while others stream: this write keeps off the loop (`SaveOptions.offLoop`).
      await this.#commitOrFail(
        (state) => {
          const next = this.#endUnlessKept(state);
          ending = next !== state;
          return next;
        },
        undefined,
        { offLoop: true },
      );
      this.#ended = ending;
      return end;
    } catch (error) {
      return { ...end, error: error as AguiError };
    }
  }

  /** Ends the execution, unless it paused, waits in a grace window or still has inputs pending; decided in order with every other change. */
  #endUnlessKept = (state: ThreadState): ThreadState => (this.#paused || this.#keptOpen || hasPending(state) ? state : endExecution(state));

  /** Answers accepted by the kernel: never sent again (R-RES-5), no longer pending. */
  accept(answers: ReadonlyArray<{ interruptId: string; digest: string }>): Promise<void> {
    return this.#commitOrFail((state) => {
      const pending = { ...state.execution.pending };
      for (const { interruptId } of answers) delete pending[interruptId];
      const applied = answers.map(({ interruptId, digest }) => ({ executionId: state.execution.executionId, interruptId, digest }));
      return { ...state, execution: { ...state.execution, pending }, appliedResumeDigests: [...state.appliedResumeDigests, ...applied] };
    }, "acceptedAnswer");
  }

  /**
   * A guidance run's id and request digest (see `guidance.ts`), written in
   * order with this run's own changes: a guidance run takes no lease, and a
   * write of its own would be lost to this run's next. `check` sees the
   * state as the write finds it and may refuse (throw). False, and nothing
   * written, when this run has let the thread go already.
   */
  async recordGuidanceRun(runId: string, digest: string, check: (state: ThreadState) => void): Promise<boolean> {
    if (this.#released) return false;
    await this.#commitOrFail((state) => {
      check(state);
      return { ...state, runDigests: { ...state.runDigests, [runId]: digest } };
    });
    return true;
  }

  /** The execution is over for good: finished, failed, cancelled, expired or lost. */
  end(): Promise<void> {
    return this.#commitOrFail(endExecution);
  }

  /**
   * The run is over (normally or not). An execution that did not pause is
   * finished; the lease goes back once every change is on disk.
   */
  async close(): Promise<void> {
    if (this.#released) return;
    this.#released = true;
    // Decided when the change runs, after every earlier one (a disconnect's decision included).
    if (!this.#ended) await this.#commit(this.#endUnlessKept).catch(() => undefined);
    await this.#queue;
    await this.options.lease.release();
    this.options.onClosed?.();
  }

  /** The client left within a grace window: the execution is not over yet, whoever ends it later. */
  keepExecutionOpen(): void {
    this.#keptOpen = true;
  }

  /**
   * Runs `decide` once every change in flight is on disk, before any change
   * asked for later: a disconnect decides what to cancel from the state the
   * run reached, not from the state its own close leaves.
   */
  afterChanges(decide: (state: ThreadState, paused: boolean) => void): void {
    this.#queue = this.#queue.then(() => decide(this.#state, this.#paused)).catch(() => undefined);
  }
}

/** The execution with `graph` kept for late views, bounded; none at all when even a trimmed one is too large. */
function withPausedGraph(execution: ThreadState["execution"], graph: PipelineGraph): ThreadState["execution"] {
  const { pipelineGraph: _previous, ...rest } = execution;
  const kept = boundedPipelineGraph(graph);
  return kept ? { ...rest, pipelineGraph: kept } : rest;
}
