/**
 * Which run showed which turn, so a conversation read back from the kernel
 * names its messages as the live streams named them (`<runId>:…`,
 * `model/message-ids.ts`): a page that still holds its conversation and
 * connects gets the same ids, and its snapshot merge changes nothing.
 *
 * The kernel's task history knows only the messages the service sent it,
 * so each admitted run is kept with the ids of the messages that open it
 * there: a new turn's user message (the client's own id), a resume's
 * answers (`agui-resume-<runId>`, `agui-resume-<runId>-<inputId>`, and a
 * sideband answer's `agui-resume-<inputId>`, see
 * `interrupts/answer-message.ts`). Ids only, no text (R-PER-3), and only
 * the newest `MESSAGE_RUNS_KEPT`: as many as the turns a conversation is
 * read back from.
 */
import { latestUserMessage } from "../a2a/request-mapping.js";
import { kindOf } from "../interrupts/kinds.js";
import { isNonEmptyString } from "../model/json.js";
import { resumedRunMessageId } from "../model/message-ids.js";
import type { ValidRunInput } from "../model/run-input.js";
import type { MessageRun, ThreadState } from "../state/thread-state.js";

/** As many runs as `CONVERSATION_TASKS` turns need when each was answered once. */
export const MESSAGE_RUNS_KEPT = 200;

const RESUME_PREFIX = "agui-resume-";

/** The kernel message ids a run's request sends first: what marks, in a task's history, where its messages begin. */
export function openingMessageIds(input: ValidRunInput): string[] {
  if (input.resume === undefined) {
    const message = latestUserMessage(input);
    return message ? [message.id] : [];
  }
  const answered = input.resume.map((entry) => entry.interruptId);
  return [
    `${RESUME_PREFIX}${input.runId}`,
    ...answered.map((id) => `${RESUME_PREFIX}${input.runId}-${id}`),
    ...answered.map((id) => `${RESUME_PREFIX}${id}`),
  ];
}

/**
 * The run's messages' name (`run.ts` names them so: a resume admitted under
 * the id of the run it resumes gets its own), with its opening ids, kept.
 */
export function recordMessageRun(state: ThreadState, input: ValidRunInput, reusesRunId: boolean): ThreadState {
  const answered = input.resume?.[0]?.interruptId;
  const messageRunId = reusesRunId && answered !== undefined ? resumedRunMessageId(input.runId, answered) : input.runId;
  const opensWith = openingMessageIds(input);
  if (opensWith.length === 0) return state;
  const calls = answeredCalls(state, input);
  const run: MessageRun = calls.length > 0 ? { messageRunId, opensWith, answeredCalls: calls } : { messageRunId, opensWith };
  const kept = [...(state.messageRuns ?? []), run].slice(-MESSAGE_RUNS_KEPT);
  return { ...state, messageRuns: kept };
}

/**
 * The tool calls a resume's answers show a result for at once, the answer's
 * text (`interrupts/answer-message.ts`: a question's or a deployment
 * confirmation's, not cancelled): the kernel's history has the text, not
 * that it was shown as the call's result.
 */
function answeredCalls(state: ThreadState, input: ValidRunInput): string[] {
  return (input.resume ?? []).flatMap(({ interruptId, status }) => {
    const pending = state.execution.pending[interruptId];
    if (!pending || status === "cancelled" || !isNonEmptyString(pending.value.toolUseId)) return [];
    const kind = kindOf(pending.value);
    return kind === "selection" || kind === "deployment_confirmation" ? [pending.value.toolUseId] : [];
  });
}

/** Opening message id → the run its messages are named under; a later run's claim wins. */
export function messageRunIndex(runs: readonly MessageRun[] | undefined): Map<string, KeptRun> {
  const index = new Map<string, KeptRun>();
  for (const run of runs ?? []) {
    const kept = { runId: run.messageRunId, answeredCalls: run.answeredCalls ?? [] };
    for (const id of run.opensWith) index.set(id, kept);
  }
  return index;
}

/** What the conversation read back needs of a kept run. */
export interface KeptRun {
  runId: string;
  answeredCalls: readonly string[];
}
