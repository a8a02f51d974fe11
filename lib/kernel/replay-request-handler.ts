/**
 * The SDK's request handler with what the demo kernel adds around a turn:
 * - a permission answer is checked strictly, as the real kernel checks it,
 *   and refused with JSON-RPC error -32602 before any event;
 * - a non-streaming `SendMessage` carrying a permission answer is a sideband
 *   answer: it is answered with the task at once, and plays the task's next
 *   turn when it was the last thing the task waited for;
 * - a call whose replay hit a fixture `error` line fails with that error
 *   (see `fixture-errors.ts`);
 * - a guidance message (`metadata.iac_code.guidance_id`) to a task that is
 *   still working is taken into the task's history and acknowledged with
 *   the task as it stands; the replay it steers plays on untouched.
 */
import {
  SendMessageConfiguration,
  TaskState,
  type AgentCard,
  type Message,
  type SendMessageRequest,
  type StreamResponse,
  type Task,
} from "@a2a-js/sdk";
import { RequestMalformedError } from "@a2a-js/sdk/errors";
import { DefaultRequestHandler, type ServerCallContext, type TaskStore } from "@a2a-js/sdk/server";
import type { FixtureErrors } from "./fixture-errors.js";
import type { ReplayExecutor } from "./replay-executor.js";
import type { TaskHistory } from "./task-history.js";
import {
  isTerminal,
  pendingProblem,
  permissionAnswerOf,
  permissionAnswerProblem,
  permissionParts,
  type PendingInputs,
} from "./interrupts.js";

interface CheckedAnswer {
  task: Task;
  inputId: string;
}

export class ReplayRequestHandler extends DefaultRequestHandler {
  constructor(
    card: AgentCard,
    private readonly store: TaskStore,
    private readonly executor: ReplayExecutor,
    private readonly fixtureErrors: FixtureErrors,
    private readonly pending: PendingInputs,
    private readonly history: TaskHistory,
  ) {
    super(card, store, executor);
  }

  override async *sendMessageStream(
    params: SendMessageRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    await this.checkAnswer(params.message, context);
    const guided = await this.guidedTask(params.message, context);
    if (guided) {
      yield { payload: { $case: "task", value: await this.recordGuidance(guided, params.message!, context) } } as StreamResponse;
      return;
    }
    yield* super.sendMessageStream(params, context);
    this.fixtureErrors.throwIfRaised(context);
  }

  /** The working task a guidance message steers; undefined for any other message, which the SDK handles as usual. */
  private async guidedTask(message: Message | undefined, context: ServerCallContext): Promise<Task | undefined> {
    const iacCode: unknown = message?.metadata?.iac_code;
    const guidanceId = typeof iacCode === "object" && iacCode !== null ? (iacCode as { guidance_id?: unknown }).guidance_id : undefined;
    if (!message?.taskId || typeof guidanceId !== "string") return undefined;
    const task = await this.store.load(message.taskId, context);
    const state = task?.status?.state;
    if (!task || isTerminal(state) || state === TaskState.TASK_STATE_INPUT_REQUIRED) return undefined;
    return task;
  }

  /** The guidance in the task's history (what a real kernel's pipeline would read next); the task as it is now. */
  private async recordGuidance(task: Task, message: Message, context: ServerCallContext): Promise<Task> {
    this.history.userTurn(task.id, message);
    const current = (await this.store.load(task.id, context)) ?? task;
    await this.store.save({ ...current, history: [...current.history, message] }, context);
    return (await this.store.load(task.id, context)) ?? current;
  }

  /**
   * A sideband permission answer does not wait for the task. When it was
   * the last thing the task waited for, it plays as the task's next turn:
   * right after the lines of a replay still running for the task (on the
   * same event bus, so the task's stream and subscribers see it), else at
   * once in the background, as a streaming answer would start it; the call
   * returns the task as it is, or as that turn begins. An answer that leaves
   * the task waiting on more is only recorded.
   */
  override async sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Message | Task> {
    const answer = await this.checkAnswer(params.message, context);
    if (answer) {
      const parked = answer.task.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED;
      if (this.pending.waitsBeyond(answer.task.id, answer.inputId)) return this.recordAnswer(answer, params.message!, context);
      // No await between the check and the hand-over: the replay cannot end in between.
      if (!parked && this.executor.continueAfterReplay(answer.task.id, params.message!))
        return this.recordAnswer(answer, params.message!, context);
      const configuration = { ...SendMessageConfiguration.fromJSON({}), ...params.configuration, returnImmediately: true };
      params = { ...params, configuration };
    }
    let result: Message | Task;
    try {
      result = await super.sendMessage(params, context);
    } catch (error) {
      this.fixtureErrors.throwIfRaised(context);
      throw error;
    }
    this.fixtureErrors.throwIfRaised(context);
    return result;
  }

  /**
   * Refuses a malformed permission answer, or one its task does not wait
   * for. Returns the answer's task when the message is a permission answer
   * to a live task; undefined for any other message, and for an unknown or
   * finished task, which the SDK then refuses with its own error.
   */
  private async checkAnswer(message: Message | undefined, context: ServerCallContext): Promise<CheckedAnswer | undefined> {
    if (!message || permissionParts(message).length === 0) return undefined;
    const problem = permissionAnswerProblem(message);
    if (problem) throw refusal(problem);
    const task = await this.store.load(message.taskId, context);
    if (!task || isTerminal(task.status?.state)) return undefined;
    const answer = permissionAnswerOf(message)!;
    const unexpected = pendingProblem(answer, this.pending.permissions(task.id));
    if (unexpected) throw refusal(unexpected);
    return { task, inputId: answer.inputId as string };
  }

  /** A sideband answer while the task runs on (or still waits on more): note it and show the task. */
  private async recordAnswer({ task, inputId }: CheckedAnswer, message: Message, context: ServerCallContext): Promise<Task> {
    this.pending.resolve(task.id, inputId);
    this.history.userTurn(task.id, message);
    // The task as it is now: a running replay may have moved it on since the answer was checked.
    const current = (await this.store.load(task.id, context)) ?? task;
    const updated: Task = { ...current, history: [...current.history, message] };
    await this.store.save(updated, context);
    return (await this.store.load(task.id, context)) ?? updated;
  }
}

const refusal = (problem: string) => new RequestMalformedError(`Invalid permission answer: ${problem}.`);
