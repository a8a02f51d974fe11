/**
 * The run lifecycle, in one place: what the service does with a run from the
 * moment a request names one until its thread is let go. Built once per
 * service (`server.ts`); the HTTP routes (`lib/http/`) only parse, call one
 * of these operations and pipe what comes back to their client, the split
 * `@a2a-js/sdk` makes between its request handler and its Express adapter.
 *
 *   start(body, client)           a RunAgentInput validated, admitted and set going: its events, read when subscribed
 *   runToEnd(body, client)        the same run with nobody reading its events (handoff's apply-input)
 *   observe(target, client)       an observer's events, by thread (connect) or by execution (subscribe)
 *   cancel(executionId, request)  the execution cancelled, through its run when this process has it
 *
 * It owns what runs share: the thread store, the kernel client, the thread
 * status hub observers watch, the disconnect grace window, the run each
 * thread has in this process, the runs whose client just left (Stop, then a
 * new message), and the runs in flight that a shutdown drains.
 */
import { randomUUID } from "node:crypto";
import type { Observable } from "rxjs";
import type { A2AClient, RunA2A } from "../a2a/client.js";
import { DEFAULT_HISTORY_BUDGET_BYTES, DEFAULT_HISTORY_PROCESS_BUDGET_BYTES, HistoryReads } from "../a2a/history-budget.js";
import { userPartsForKernel } from "../a2a/images.js";
import type { Config } from "../config.js";
import { describeError } from "../i18n/index.js";
import { keepInput } from "../interrupts/keep-input.js";
import { toInterrupt } from "../interrupts/to-interrupt.js";
import { errorFields, silentLogger, type Logger } from "../log.js";
import type { ValidRunInput } from "../model/run-input.js";
import { countRun, runKindOf } from "../metrics/run-metrics.js";
import type { ServiceMetrics } from "../metrics/service-metrics.js";
import { runAgent } from "../run.js";
import type { RunPorts, SseItem } from "../run-pipeline.js";
import type { ThreadStore } from "../state/thread-store.js";
import { admitRun, type AdmissionDependencies } from "../threads/admission.js";
import { cancelExecution, cancelStoredExecution, type CancelOutcome } from "../threads/cancel-execution.js";
import { LocalDisconnectGrace, type DisconnectGrace } from "../threads/disconnect-grace.js";
import { expireHeldExecution } from "../threads/disconnect-grace-redis.js";
import { endStoredExecution } from "../threads/end-execution.js";
import { admitGuidance, guidanceEvents, isGuidanceRun } from "../threads/guidance.js";
import type { SharedThreads } from "../threads/shared-threads-redis.js";
import { LocalThreadStatusHub, type ThreadStatusHub } from "../threads/status-hub.js";
import { ThreadRun } from "../threads/thread-run.js";
import { validateRunInput } from "../validation.js";
import { readThrough, type FlowGate } from "./flow-gate.js";
import { LeavingRuns } from "./leaving-runs.js";
import { observeTarget, type ObserveTarget } from "./observe-target.js";
import { RunRegistry } from "./run-registry.js";
import type { RunSlots } from "./run-slots.js";
import { waitUntil } from "./wait-until.js";
import { idAttributes, inSpan } from "../tracing/spans.js";

/** Who a run or an observer streams to: what the service needs of the request, without its transport. */
export interface RunClient {
  /** The request's language: error messages, and the kernel's `preferredLanguage`. */
  language: string;
  /** The request's logger; the run binds its own ids. */
  log: Logger;
  /** Ids the request turned out to be about, for the records its transport writes. */
  noteIds?(ids: Record<string, string>): void;
  /** The stream's flow (see `flow-gate.ts`): the kernel is read only as fast as this client reads. Absent: as fast as it comes. */
  gate?: FlowGate;
  /** Calls `listener` once the client's connection has closed: `finished` when its stream was sent to the end. */
  onClose(listener: (finished: boolean) => void): void;
}

export interface RunsDependencies {
  config: Pick<Config, "allowedCwds" | "defaultCwd" | "clientTools" | "heartbeatMs" | "interruptTtlS" | "disconnectGraceMs">;
  a2a: A2AClient;
  store: ThreadStore;
  now?: () => number;
  /** Records of what happens outside any one request (a grace window that ran out). */
  log?: Logger;
  /** Instances on one Redis share the thread status and the grace window; without it both stay in this process. */
  sharedThreads?: SharedThreads;
  /** Counts each run's start and end; without it nothing is counted. */
  metrics?: ServiceMetrics;
  /** Tests and tracing: wraps each stage of every run's chain (see `RunPorts.instrument`). */
  instrument?: RunPorts["instrument"];
  /** The caps on runs at once (see `run-slots.ts`); without it, none. */
  slots?: RunSlots;
  /** What reconnects may hold of conversations read back (`a2a/history-budget.ts`); the defaults without it. */
  historyReads?: HistoryReads;
}

export class Runs {
  /** The runs in flight, which a shutdown drains. */
  readonly registry: RunRegistry;
  readonly hub: ThreadStatusHub;
  readonly grace: DisconnectGrace;
  /** The run each thread has in this process: guidance steers it, and a cancel goes through it so its writes stay in order. */
  readonly #active = new Map<string, ThreadRun>();
  /** Turns on their way into `#active`: admitted, or being admitted, and writing already. */
  #admitting = 0;
  /** Called whenever a turn's admission ends or its thread is let go (see `settled`). */
  readonly #onSettled = new Set<() => void>();
  readonly #leaving = new LeavingRuns();
  readonly #config: RunsDependencies["config"];
  readonly #a2a: A2AClient;
  readonly #store: ThreadStore;
  readonly #now: () => number;
  readonly #metrics: ServiceMetrics | undefined;
  readonly #instrument: RunPorts["instrument"];
  readonly #slots: RunSlots | undefined;
  readonly #historyReads: HistoryReads;

  constructor({
    config,
    a2a,
    store,
    now = Date.now,
    log = silentLogger,
    sharedThreads,
    metrics,
    instrument,
    slots,
    historyReads,
  }: RunsDependencies) {
    this.#slots = slots;
    this.#config = config;
    this.#historyReads =
      historyReads ?? new HistoryReads({ requestBytes: DEFAULT_HISTORY_BUDGET_BYTES, processBytes: DEFAULT_HISTORY_PROCESS_BUDGET_BYTES });
    this.#a2a = a2a;
    this.#store = store;
    this.#now = now;
    this.#metrics = metrics;
    this.#instrument = instrument;
    this.registry = new RunRegistry(now);
    this.hub = sharedThreads?.hub ?? new LocalThreadStatusHub();
    // A wait another instance started may end here: its task is cancelled and its execution ended from its ids.
    const expireHeld = expireHeldExecution({ cancelTask: (taskId) => a2a.cancelTask(taskId), endExecution: this.#endExecution, log });
    this.grace = sharedThreads?.grace(config.disconnectGraceMs, expireHeld) ?? new LocalDisconnectGrace(config.disconnectGraceMs);
  }

  /**
   * A run for `body` (a RunAgentInput, not yet validated): validated,
   * admitted on its thread (held until the run lets go) and counted in
   * flight from the start, so a drain waits for a run still being admitted.
   * Its events flow once subscribed; refusals before that are thrown.
   */
  async start(body: unknown, client: RunClient): Promise<Observable<SseItem>> {
    const startedAt = performance.now();
    const stop = this.registry.enter(client);
    // The run's kernel streams are read only while its client keeps up, and fail once a drain stops it.
    const a2a = this.registry.clientFor(this.#kernelFor(client), stop);
    const input = validateRunInput(body, this.#config);
    client.noteIds?.({ threadId: input.threadId, runId: input.runId });
    if (isGuidanceRun(input)) return this.#counted(input, startedAt, await this.#guide(input, a2a, client));
    // Before the kernel hears of it, a new turn or a resume alike; guidance steers a run that already holds its slot.
    const release = await this.#slots?.take(input.forwardedProps.iacCode.userId ?? undefined);
    if (release) client.onClose(release);
    try {
      return this.#counted(input, startedAt, await this.#turn(input, a2a, client));
    } catch (error) {
      release?.();
      throw error;
    }
  }

  #counted(input: ValidRunInput, startedAt: number, run$: Observable<SseItem>): Observable<SseItem> {
    return this.#metrics ? countRun(this.#metrics, runKindOf(input), startedAt)(run$) : run$;
  }

  /**
   * `start`, run to its end with nobody reading its events: a pending input a
   * handoff delivers (see `handoff-route.ts`). It is tied to its client as a
   * streamed run is: counted as an open run stream while it goes, and left
   * (its task cancelled, under the same grace window) when the client's
   * connection closes first. Resolves `left` then, `ended` otherwise.
   */
  async runToEnd(body: unknown, client: RunClient): Promise<"ended" | "left"> {
    const run$ = await this.start(body, client);
    const streamEnded = this.#metrics?.streamOpened("run");
    return new Promise((resolve, reject) => {
      let over = false;
      const end = (how: "ended" | "left", error?: unknown) => {
        if (over) return;
        over = true;
        streamEnded?.(how === "ended" ? "completed" : "left");
        if (error === undefined) resolve(how);
        else reject(error instanceof Error ? error : new Error(String(error)));
      };
      const subscription = run$.subscribe({ complete: () => end("ended"), error: (error: unknown) => end("ended", error) });
      // Told at once when the connection closed while the run was admitted: the run starts and is left, as a stream's is.
      client.onClose(() => {
        subscription.unsubscribe();
        end("left");
      });
    });
  }

  /**
   * Resolves once no turn here is being admitted or holds its thread (each
   * one's last change is on disk and its lease given back), or after `ms`.
   * A drain waits for runs until their clients leave, and a run whose client
   * has just left may still be writing its end: a process that exited then
   * would cut that write short, leaving a temp file in the state directory
   * and the thread's last change lost.
   */
  settled(ms: number): Promise<void> {
    return waitUntil(() => this.#admitting === 0 && this.#active.size === 0, this.#onSettled, ms);
  }

  #checkSettled(): void {
    for (const check of [...this.#onSettled]) check();
  }

  /**
   * An observer's stream (contract §10, R-SIB-5): the thread's conversation,
   * status and live events, by thread id (a page that reloads) or by
   * execution id (a watcher that knows it). It takes no lease and cancels
   * nothing; a client back within its grace window keeps its task alive
   * while it watches (R-SIB-7).
   */
  async observe(target: ObserveTarget, client: RunClient): Promise<Observable<SseItem>> {
    client.noteIds?.({ threadId: target.threadId, ...(target.executionId === undefined ? {} : { executionId: target.executionId }) });
    // A run of this thread here may have shown the kernel's words before its task's id is on disk: the view reads the thread after it.
    await this.#active.get(target.threadId)?.changesWritten;
    return observeTarget(target, {
      store: this.#store,
      a2a: this.#kernelFor(client),
      hub: this.hub,
      grace: this.grace,
      endExecution: this.#endExecution,
      heartbeatMs: this.#config.heartbeatMs,
      language: client.language,
      log: client.log,
      historyReads: this.#historyReads,
    });
  }

  /**
   * Cancels an execution (R-HTTP-3): through the thread's run in this
   * process when there is one, so its writes stay in order; else under the
   * thread's lease; else, when another instance's run holds the thread, through
   * the kernel alone, and that run ends the execution itself.
   */
  async cancel(executionId: string, request: { threadId: string; rosInvocationId: string }): Promise<CancelOutcome> {
    const cancelTask = (taskId: string) => this.#a2a.cancelTask(taskId);
    const active = this.#active.get(request.threadId);
    if (active) return cancelExecution(executionId, request, active, cancelTask);
    return cancelStoredExecution(this.#store, request.threadId, (thread) => cancelExecution(executionId, request, thread, cancelTask));
  }

  readonly #endExecution = (threadId: string, executionId: string) => endStoredExecution(this.#store, threadId, executionId);

  /** The kernel as `client`'s stream reads it: through its flow gate, when it has one. */
  #kernelFor(client: RunClient): RunA2A {
    return client.gate ? readThrough(client.gate, this.#a2a) : this.#a2a;
  }

  /** A guidance run steers the thread's running task: no lease, no grace expiry, the thread's run left as it is (see `guidance.ts`). */
  async #guide(input: ValidRunInput, a2a: RunA2A, { language, log }: RunClient): Promise<Observable<SseItem>> {
    const target = await admitGuidanceInSpan(input, this.#active.get(input.threadId), this.#store, (pending) =>
      toInterrupt(pending, language),
    );
    // Its images go as a new turn's do: decoded, and resized where too large.
    const userParts = await userPartsForKernel(input);
    const runLog = log.child({ threadId: input.threadId, runId: input.runId });
    return guidanceEvents(input, target, {
      userParts,
      sendStreamingMessage: (params) => a2a.sendStreamingMessage(params),
      language,
      describe: (error) => describeError(error, language),
      now: this.#now,
      onFailure: (error) => runLog.warn({ ...errorFields(error), code: error.code }, "the guidance run failed"),
    });
  }

  /** A new turn or a resume: admitted under the thread's lease, which its run holds until it ends. */
  async #turn(input: ValidRunInput, a2a: RunA2A, client: RunClient): Promise<Observable<SseItem>> {
    this.#admitting++;
    try {
      return await this.#admitTurn(input, a2a, client);
    } finally {
      // An admitted turn is in `#active` by now: it is counted in one or the other throughout.
      this.#admitting--;
      this.#checkSettled();
    }
  }

  async #admitTurn(input: ValidRunInput, a2a: RunA2A, client: RunClient): Promise<Observable<SseItem>> {
    const { threadId } = input;
    const { language } = client;
    const isNewTurn = input.resume === undefined;
    // Before admission: an image the kernel cannot be sent is a 400 that leaves the thread as it was. A resume sends no message.
    const userParts = isNewTurn ? await userPartsForKernel(input) : undefined;
    // A new turn gives up on an execution whose client left and never came back.
    if (isNewTurn) await this.grace.expireThread(threadId);
    const admitted = await admitRunInSpan(input, {
      store: this.#store,
      now: this.#now,
      newExecutionId: randomUUID,
      log: client.log.child({ threadId, runId: input.runId }),
      cancelTask: (taskId) => a2a.cancelTask(taskId),
      getTask: (taskId) => a2a.getTask(taskId),
      interruptTtlS: this.#config.interruptTtlS,
      listTasks: (contextId) => a2a.listTasks(contextId),
      isHeld: (executionId) => this.grace.holds(executionId),
      toInterrupt: (pending) => toInterrupt(pending, language),
      waitForLeavingRun: (id) => this.#leaving.waitFor(id),
    });
    let released!: () => void;
    const threadReleased = new Promise<void>((resolve) => (released = resolve));
    const thread = new ThreadRun(admitted.state, {
      store: this.#store,
      lease: admitted.lease,
      interruptTtlS: this.#config.interruptTtlS,
      now: this.#now,
      keepInput: (projection) => keepInput(projection),
      toInterrupt: (pending) => toInterrupt(pending, language),
      onClosed: () => {
        if (this.#active.get(threadId) === thread) this.#active.delete(threadId);
        released();
        this.#checkSettled();
      },
      admitted: admitted.written,
    });
    this.#active.set(threadId, thread);
    // A client that left before its run ended (Stop): the next message on the thread may wait for this run to let go.
    client.onClose((finished) => {
      if (!finished && this.#active.get(threadId) === thread) this.#leaving.add(threadId, threadReleased);
    });
    const { gate } = client;
    return runAgent(
      { input, language, thread, isResume: admitted.isResume, userParts },
      {
        a2a,
        heartbeatMs: this.#config.heartbeatMs,
        log: client.log,
        now: this.#now,
        hub: this.hub,
        grace: this.grace,
        endExecution: this.#endExecution,
        instrument: this.#instrument,
        ...(gate === undefined ? {} : { holdReadsDuring: <T>(write: Promise<T>) => gate.hold(write) }),
      },
    );
  }
}

/** Admission in a span of its own (see `tracing/spans.ts`): the run's ids, and the execution it was admitted to. */
const admitRunInSpan = (input: ValidRunInput, deps: AdmissionDependencies) =>
  inSpan("admission", idAttributes(input), async (span) => {
    const admitted = await admitRun(input, deps);
    span.setAttributes(idAttributes(admitted.state.execution));
    return admitted;
  });

/** A guidance run's admission in a span of its own: the run's ids, and the task it steers. */
const admitGuidanceInSpan = (...args: Parameters<typeof admitGuidance>) =>
  inSpan("admission", idAttributes(args[0]), async (span) => {
    const target = await admitGuidance(...args);
    span.setAttributes(idAttributes(target));
    return target;
  });
