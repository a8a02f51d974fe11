/**
 * `RUN_STARTED` as a 1.0 producer sends it: the run's ids, the protocol
 * version the stream speaks (`protocolVersion`, which a 1.0 client reads as
 * the producer's declaration), and the input the run was started from
 * (`input`), so a consumer that did not make the request sees what the
 * agent was asked.
 *
 * The echo is the request less what must not travel back:
 * - the credentials of `forwardedProps.iacCode` (`llmApiKey`, and
 *   `llmHeaders`, `alibabaCloud.accessKeySecret` and `.securityToken`), as the request
 *   digest leaves them out (`threads/admission.ts`);
 * - `forwardedProps` keys the service does not know: a generic client's own
 *   props, among which it cannot tell a token from a setting;
 * - the whole echo when its JSON passes `MAX_INPUT_ECHO_CHARS` (inline
 *   images, a long history): the client sent it, and a record that large
 *   nears the 10 MB a client's SSE reader holds.
 */
import { EventType, PROTOCOL_VERSION, type AGUIEvent, type RunAgentInput } from "@ag-ui/core";
import type { ValidRunInput } from "./run-input.js";

export const MAX_INPUT_ECHO_CHARS = 1024 * 1024;

/** The request as `RUN_STARTED.input` may show it (see above), or undefined when it is too large to echo. */
export function inputEcho(input: ValidRunInput): RunAgentInput | undefined {
  const { llmApiKey: _key, llmHeaders: _headers, alibabaCloud, ...iacCode } = input.forwardedProps.iacCode;
  const cloud = alibabaCloud && {
    ...(alibabaCloud.accessKeyId === undefined ? {} : { accessKeyId: alibabaCloud.accessKeyId }),
    ...(alibabaCloud.regionId === undefined ? {} : { regionId: alibabaCloud.regionId }),
  };
  const display = input.forwardedProps.iacCodeDisplay;
  const echo: RunAgentInput = {
    ...input,
    forwardedProps: {
      iacCode: { ...iacCode, ...(cloud ? { alibabaCloud: cloud } : {}) },
      ...(display === undefined ? {} : { iacCodeDisplay: display }),
    },
  };
  return JSON.stringify(echo).length <= MAX_INPUT_ECHO_CHARS ? echo : undefined;
}

export function runStartedEvent(input: ValidRunInput): AGUIEvent {
  const { threadId, runId, parentRunId } = input;
  const echo = inputEcho(input);
  return {
    type: EventType.RUN_STARTED,
    threadId,
    runId,
    ...(parentRunId ? { parentRunId } : {}),
    protocolVersion: PROTOCOL_VERSION,
    ...(echo ? { input: echo } : {}),
  };
}
