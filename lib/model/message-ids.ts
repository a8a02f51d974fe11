/**
 * The ids of the messages a client builds from a run (docs/agui-mapping.md
 * §4). A client keys its conversation on message ids: an id seen before
 * appends to that message, wherever it stands. So every id carries the run
 * that shows it (a resumed run, or a second run on the thread, never writes
 * into an earlier run's message), and otherwise only what the kernel itself
 * names (its message id, a pipeline envelope's coordinates, a tool call id):
 * an observer of the same run, or the run after a re-attach, computes the
 * same ids from the same kernel events. Pipeline messages are scoped to
 * the execution instead (`projectText`'s `pipelineScope`): a pipeline names
 * each message once, and the run that resumes it goes on in them.
 */

/**
 * `<runId>:<kernel message>`, or `<runId>:<kernel message>:after:<toolCallId>`
 * for the kernel's text after a tool result ended the message's turn: the
 * text goes on in a new message, below the result.
 */
export const runMessageId = (runId: string, kernelMessage: string, afterToolCall?: string): string =>
  afterToolCall === undefined ? `${runId}:${kernelMessage}` : `${runId}:${kernelMessage}:after:${afterToolCall}`;

/** The assistant message of a turn that called tools before it said anything: named after its first call. */
export const toolTurnMessageId = (runId: string, firstToolCallId: string): string => `${runId}:tool-calls:${firstToolCallId}`;

/**
 * The run a resume's messages are named under when the resume reuses the
 * id of the run it resumes (as CopilotKit sends it): the answered interrupt
 * tells the two runs apart.
 */
export const resumedRunMessageId = (runId: string, interruptId: string): string => `${runId}:resume-${interruptId}`;

/** The tool message a call's result is shown as, in the run that shows it. */
export const toolResultMessageId = (runId: string, toolCallId: string): string => `${runId}:tool-result:${toolCallId}`;
