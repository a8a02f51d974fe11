/**
 * The kernel side of a resume run (R-RES, contract §5): checks the answers
 * against the pending interrupts, confirms the parked task with `GetTask`,
 * sends each answer to that same task, and follows the task until the run
 * can end. Out comes a stream of kernel signals, like a new turn's, which
 * the run pipeline projects the same way.
 *
 * Until the kernel accepts an answer nothing changes: a refused or invalid
 * answer leaves every interrupt answerable and the task parked, so those
 * failures end the run as "settled" (no cancel). Acceptance — the first
 * event of the answer's stream — is persisted before the run goes on, so an
 * answer is never sent twice (R-RES-5).
 */
import type { ResumeEntry } from "@ag-ui/core";
import { concat, concatMap, defer, EMPTY, from, mergeMap, Observable, of } from "rxjs";
import { iacCodeMetadata } from "../a2a/request-mapping.js";
import type { KernelInput } from "../model/kernel-signal.js";
import { AguiError, toAguiError } from "../errors.js";
import { messageFor } from "../i18n/index.js";
import { answerMessage, checkResumeEntries, resumeDigest, validateAnswer, type AnswerDelivery } from "../interrupts/index.js";
import type { ValidRunInput } from "../model/run-input.js";
import type { KernelSignal } from "../model/kernel-signal.js";
import { signalsOf } from "../../operators/to-kernel-signals.js";
import { toA2AUpdate, type A2AUpdate } from "../../operators/unwrap-stream-response.js";
import { newToolCallId } from "../model/tool-ids.js";
import type { RunA2A } from "../a2a/client.js";
import { liveEvents, reattach, recoveredPipeline } from "./recovery.js";
import { taskNow } from "./task-now.js";
import { pendingExpired } from "./thread-transitions.js";
import type { ThreadRun } from "./thread-run.js";
import { kernelInputsOf } from "../interrupts/keep-input.js";
import { realWorkspacePath } from "../workspace.js";

export interface ResumeContext {
  input: Pick<ValidRunInput, "runId" | "resume" | "forwardedProps">;
  language: string;
  thread: ThreadRun;
  a2a: RunA2A;
  now: () => number;
  /** The client sees interrupts as frontend tool calls too: close each with the answer (R-SIB-4). */
  interruptsAsTools?: boolean;
  /** Keeps the kernel streams unread while an acceptance is persisted (see `RunDependencies.holdReadsDuring`). */
  holdReadsDuring?: <T>(write: Promise<T>) => Promise<T>;
}

/** Ends the run without touching the task: it stays as it was, parked or gone. */
const settled = (error: AguiError): KernelSignal => ({ kind: "run-end", error, kernelSettled: true });

interface Answer {
  interruptId: string;
  digest: string;
  /** What the client answered, for the interrupt's frontend tool call. */
  reply: unknown;
  delivery: Exclude<AnswerDelivery, { call: "cancel" }>;
}

/** The kernel waits on inputs the thread has not announced yet: they are announced, and nothing is sent. */
interface FreshInputs {
  fresh: KernelInput[];
}

/** The user cancelled a question or a confirmation: the task is cancelled, and each tool call that asked gets its result. */
interface CancelledByUser {
  toolResults: KernelSignal[];
}

export function resumeSignals(fullContext: ResumeContext): Observable<KernelSignal> {
  // The answer's stream keeps its context while it lasts: of the input (which may carry the whole conversation), only what a resume reads.
  const { runId, resume, forwardedProps } = fullContext.input;
  const context: ResumeContext = { ...fullContext, input: { runId, resume, forwardedProps } };
  return defer(() => from(prepare(context))).pipe(
    mergeMap((prepared) =>
      prepared instanceof AguiError
        ? of(settled(prepared))
        : "toolResults" in prepared
          ? from<KernelSignal[]>([...prepared.toolResults, { kind: "run-end", error: undefined, kernelSettled: true, cancelled: true }])
          : "fresh" in prepared
            ? concat(
                missedPipelineEvents(context),
                of<KernelSignal>({ kind: "run-end", error: undefined, kernelSettled: true, inputs: prepared.fresh }),
              )
            : concat(missedPipelineEvents(context), deliver(context, prepared)),
    ),
  );
}

/** A paused pipeline may have moved on (other candidates): what it did since the pause comes first. */
function missedPipelineEvents({ input, thread, a2a }: ResumeContext): Observable<KernelSignal> {
  const { taskId, pipelineSequence } = thread.state.execution;
  const isPipeline = pipelineSequence > 0 || input.forwardedProps.iacCode.runMode === "pipeline";
  return isPipeline && taskId ? recoveredPipeline(a2a, taskId, pipelineSequence) : EMPTY;
}

/** Everything that can refuse the resume before an answer leaves: the answers to send, or why not. */
async function prepare(context: ResumeContext): Promise<Answer[] | FreshInputs | CancelledByUser | AguiError> {
  const { input, thread, a2a, now } = context;
  const listed: ResumeEntry[] = input.resume ?? [];
  const { execution } = thread.state;
  const taskId = execution.taskId;
  const appliedDigest = (interruptId: string) =>
    thread.state.appliedResumeDigests.find(
      (applied) => applied.executionId === execution.executionId && applied.interruptId === interruptId,
    )?.digest;
  // A retry may repeat an answer the kernel accepted already: the same answer is skipped, the others go on.
  const alreadyAccepted = (entry: ResumeEntry) =>
    !Object.hasOwn(execution.pending, entry.interruptId) && appliedDigest(entry.interruptId) === resumeDigest(entry);
  const skipped = listed.filter(alreadyAccepted);
  const entries = skipped.length > 0 && skipped.length < listed.length ? listed.filter((entry) => !alreadyAccepted(entry)) : listed;

  if (taskId === null || Object.keys(execution.pending).length === 0) {
    const stored = entries.map((entry) => appliedDigest(entry.interruptId));
    if (entries.length === 0 || stored.some((digest) => digest === undefined)) {
      return new AguiError("EXECUTION_LOST", { reason: "nothingPending" });
    }
    const changed = entries.some((entry, index) => stored[index] !== resumeDigest(entry));
    return new AguiError("RESUME_ALREADY_APPLIED", changed ? { reason: "differentAnswer" } : {});
  }
  if (pendingExpired(thread.state, now())) {
    await a2a.cancelTask(taskId).catch(() => undefined);
    await thread.end();
    return new AguiError("EXECUTION_EXPIRED");
  }
  try {
    await ensureSessionRestored(thread, a2a, taskId);
    const waitingOn = await confirmParkedTask(thread, a2a, taskId);
    const fresh = waitingOn.filter(({ projection }) => {
      const id = projection.inputId;
      return typeof id === "string" && !Object.hasOwn(execution.pending, id) && appliedDigest(id) === undefined;
    });
    if (fresh.length > 0) return { fresh };
    const ordered = checkResumeEntries(execution.pending, entries, appliedDigest);
    const answers = ordered.map((entry) => ({ entry, answer: validateAnswer(execution.pending[entry.interruptId]!, entry) }));

    const permissions = answers.filter(({ entry }) => execution.pending[entry.interruptId]!.value.kind === "permission");
    const sideband = permissions.length > 0 && permissions.every(({ entry }) => execution.pending[entry.interruptId]!.sideband);
    const deliveries = answers.map(({ entry, answer }) => ({
      entry,
      delivery: answerMessage(execution.pending[entry.interruptId]!, answer, {
        taskId,
        contextId: thread.state.contextId,
        runId: input.runId,
        sideband,
      }),
    }));
    if (deliveries.some(({ delivery }) => delivery.call === "cancel")) {
      // Read before the execution ends: ending it forgets what was pending.
      const toolResults = cancelledToolResults(context, ordered);
      await a2a.cancelTask(taskId);
      await thread.end();
      return { toolResults };
    }
    return deliveries.map(({ entry, delivery }) => ({
      interruptId: entry.interruptId,
      digest: resumeDigest(entry),
      reply: { status: entry.status, payload: entry.payload ?? null },
      delivery: delivery as Answer["delivery"],
    }));
  } catch (error) {
    return toAguiError(error, "A2A_UNAVAILABLE");
  }
}

/**
 * A result for each tool call the cancelled interrupts leave open: the
 * kernel's own (`toolUseId`), and the interrupt's when the client shows it
 * as a tool call too. A call with no result below it is a question a chat
 * shows as still waiting.
 */
function cancelledToolResults({ thread, language, interruptsAsTools }: ResumeContext, entries: readonly ResumeEntry[]): KernelSignal[] {
  const content = messageFor(new AguiError("CANCELLED", { reason: "byInterrupt" }), language);
  const result = (toolCallId: string, result: unknown): KernelSignal => ({
    kind: "tool",
    status: "completed",
    toolCallId,
    toolName: "tool",
    input: undefined,
    result,
  });
  return entries.flatMap(({ interruptId, status, payload }) => {
    const { toolUseId } = thread.state.execution.pending[interruptId]?.value ?? {};
    return [
      ...(interruptsAsTools ? [result(interruptId, { status, payload: payload ?? null })] : []),
      ...(typeof toolUseId === "string" && toolUseId !== "" ? [result(toolUseId, content)] : []),
    ];
  });
}

/**
 * The cold-resume preflight (contract §5): a kernel that restarted brings
 * the session back from its backup before anything else is asked of it. A
 * session it has no backup of is EXECUTION_LOST; one whose backup is still
 * syncing SESSION_BACKUP_NOT_READY. Either way the interrupts are kept, as
 * the reference adapter keeps them: the kernel may yet bring the session
 * back, and until they expire or the execution is cancelled they are what
 * a client can answer. Without a session id (the kernel never named one)
 * there is nothing to ask.
 */
async function ensureSessionRestored(thread: ThreadRun, a2a: RunA2A, taskId: string): Promise<void> {
  const sessionId = thread.state.iacCodeSessionId;
  if (!sessionId) return;
  const status = await a2a.ensureRestored({ cwd: realWorkspacePath(thread.state.cwd), sessionId, taskId });
  if (status === "lost") throw new AguiError("EXECUTION_LOST", { reason: "sessionLost" });
}

/**
 * The task must still be this thread's, and still waiting: a task the kernel
 * finished cannot be resumed, and its execution ends. Gives back the inputs
 * it waits on. A task the kernel does not know (any more) is EXECUTION_LOST
 * with the interrupts kept, as the reference adapter keeps them (a kernel
 * that restarted may not have restored it yet); a kernel out of reach is
 * A2A_UNAVAILABLE, the interrupts kept too.
 */
async function confirmParkedTask(thread: ThreadRun, a2a: RunA2A, taskId: string): Promise<KernelInput[]> {
  const now = await taskNow((id) => a2a.getTask(id), taskId, thread.state.contextId);
  if (now.kind === "live") return now.inputs;
  if (now.kind === "gone") throw new AguiError("EXECUTION_LOST", { reason: "taskNotFound" }, { cause: now.cause });
  await thread.end();
  throw new AguiError("EXECUTION_LOST", { reason: "taskEnded" });
}

function deliver(context: ResumeContext, answers: Answer[]): Observable<KernelSignal> {
  const { thread, a2a } = context;
  const taskId = thread.state.execution.taskId!;
  const metadata = { iac_code: iacCodeMetadata(context.input.forwardedProps.iacCode, context.language) };
  const withMetadata = (answer: Answer) => {
    const extra = answer.delivery.inputResponse ? { inputResponse: answer.delivery.inputResponse } : {};
    return { ...answer.delivery.message, metadata: { iac_code: { ...metadata.iac_code, ...extra } } };
  };
  const accepted = (answer: Answer): KernelSignal[] => {
    const { iacCodeSessionId } = thread.state;
    const toolResult = answer.delivery.toolResult;
    const asTool: KernelSignal[] = context.interruptsAsTools
      ? [{ kind: "tool", status: "completed", toolCallId: answer.interruptId, toolName: "tool", input: undefined, result: answer.reply }]
      : [];
    return [
      ...asTool,
      { kind: "task-bound", taskId, contextId: thread.state.contextId },
      ...(iacCodeSessionId ? [{ kind: "session-bound", sessionId: iacCodeSessionId } as const] : []),
      ...(toolResult
        ? [
            {
              kind: "tool",
              status: "completed",
              toolCallId: toolResult.toolCallId,
              toolName: "tool",
              input: undefined,
              result: toolResult.content,
            } as const,
          ]
        : []),
    ];
  };

  if (answers.every((answer) => answer.delivery.call === "sideband")) {
    // Sub-pipeline waits: each answer on its own, then one snapshot and the task's live events.
    const sent = defer(async () => {
      for (const answer of answers) {
        try {
          await a2a.sendMessage({ message: withMetadata(answer), configuration: { acceptedOutputModes: ["text/plain"] } });
        } catch (error) {
          return [settled(notAccepted(error))];
        }
        await thread.accept([answer]);
      }
      return accepted(answers.at(-1)!);
    }).pipe(mergeMap((signals) => signals));
    return concat(sent, reattach(a2a, taskId, thread.state.execution.pipelineSequence));
  }

  const streams = answers.map((answer, index) => {
    const last = index === answers.length - 1;
    let first = true;
    return a2a.sendStreamingMessage({ message: withMetadata(answer), configuration: { acceptedOutputModes: ["text/plain"] } }).pipe(
      concatMap(async (frame): Promise<KernelSignal[]> => {
        const update = toA2AUpdate(frame);
        const signals = signalsOf(update, { newToolId: newToolCallId, findInputs: kernelInputsOf }).filter((signal) =>
          keep(signal, update, first, last),
        );
        if (!first) return signals;
        first = false;
        const accepting = thread.accept([answer]);
        await (context.holdReadsDuring?.(accepting) ?? accepting);
        return [...accepted(answer), ...signals];
      }),
      mergeMap((signals) => signals),
      notAcceptedIsSettled(() => first),
    );
  });
  return concat(
    ...streams,
    defer(() => liveEvents(a2a, taskId)),
  );
}

/**
 * Which signals of an answer stream count. Its first frame is a snapshot of
 * the task as it was — still waiting, with the text already shown — so only
 * its ids count; and while more answers are to come, a "still waiting" in
 * between must not end the run.
 */
function keep(signal: KernelSignal, update: A2AUpdate, first: boolean, last: boolean): boolean {
  if (first && update.kind === "task") return signal.kind === "task-bound" || signal.kind === "session-bound";
  if (!last) return signal.kind !== "task-state" && signal.kind !== "inputs";
  return true;
}

/**
 * Why an answer the kernel has not accepted failed. A JSON-RPC error there
 * is the kernel refusing the answer, not the execution failing: the
 * interrupt is still answerable, so it is A2A_UNAVAILABLE as the reference
 * adapter has it (the kernel's code and message kept for the logs and the
 * message's detail), or SESSION_BACKUP_NOT_READY to be retried.
 */
function notAccepted(error: unknown): AguiError {
  const failure = toAguiError(error, "A2A_UNAVAILABLE");
  if (failure.code !== "A2A_EXECUTION_FAILED") return failure;
  return new AguiError("A2A_UNAVAILABLE", { ...failure.params, reason: "answerRejected" }, { cause: failure.cause });
}

/** An answer stream that fails or ends before the kernel accepted anything leaves the interrupt answerable. */
function notAcceptedIsSettled(notYetAccepted: () => boolean) {
  return (source: Observable<KernelSignal>): Observable<KernelSignal> =>
    new Observable<KernelSignal>((subscriber) =>
      source.subscribe({
        next: (signal) => subscriber.next(signal),
        error: (error: unknown) => {
          if (!notYetAccepted()) return subscriber.error(error);
          subscriber.next(settled(notAccepted(error)));
          subscriber.complete();
        },
        complete: () => {
          if (notYetAccepted()) subscriber.next(settled(new AguiError("A2A_UNAVAILABLE", { reason: "answerNotAccepted" })));
          subscriber.complete();
        },
      }),
    );
}
