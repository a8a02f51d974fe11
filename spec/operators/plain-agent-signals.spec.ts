/**
 * What an agent without iac-code metadata says, as kernel signals
 * (`operators/to-kernel-signals.ts` with `lib/interrupts/plain-agent-input.ts`):
 * its artifact text is text, its other artifact parts an artifact, and its
 * input-required or auth-required status an input answered in free text.
 */
import { describe, expect, it } from "@jest/globals";
import { EventType } from "@ag-ui/core";
import { lastValueFrom, of, toArray } from "rxjs";
import { announceSession } from "../../operators/announce-session.js";
import { signalsOf } from "../../operators/to-kernel-signals.js";
import { toA2AUpdate } from "../../operators/unwrap-stream-response.js";
import { kernelInputsOf } from "../../lib/interrupts/keep-input.js";
import { plainAgentInput } from "../../lib/interrupts/plain-agent-input.js";
import { responseSchemaFor, toInterrupt, answerMessage, validateAnswer } from "../../lib/interrupts/index.js";
import type { InputProjection } from "../../lib/state/thread-state.js";

const signals = (frame: Record<string, unknown>) =>
  signalsOf(toA2AUpdate(frame), { newToolId: () => "tool-x", findInputs: kernelInputsOf });
const question = { messageId: "t1-question", role: "ROLE_AGENT", parts: [{ text: "Which colour?" }] };

describe("an agent without iac-code metadata", () => {
  it("streams an artifact's text chunks as text of one message, named after the artifact", () => {
    const chunk = (text: string) => ({
      artifactUpdate: { taskId: "t1", contextId: "c1", append: true, artifact: { artifactId: "t1-answer", parts: [{ text }] } },
    });
    expect(signals(chunk("Hel")).slice(1)).toEqual([{ kind: "text", messageId: "t1-answer", text: "Hel", source: "delta" }]);
    expect(signals(chunk("lo")).slice(1)).toEqual([{ kind: "text", messageId: "t1-answer", text: "lo", source: "delta" }]);
  });

  it("keeps an artifact's data and file parts as the artifact, less its text", () => {
    const parts = [{ text: "Summary" }, { data: { rows: 2 }, mediaType: "application/json" }, { url: "file:///r.csv", filename: "r.csv" }];
    const frame = { artifactUpdate: { taskId: "t1", contextId: "c1", artifact: { artifactId: "a1", name: "report", parts } } };
    expect(signals(frame).slice(1)).toEqual([
      { kind: "artifact", artifact: { artifactId: "a1", name: "report", parts: parts.slice(1) } },
      { kind: "text", messageId: "a1", text: "Summary", source: "delta" },
    ]);
    const files = { artifactUpdate: { taskId: "t1", contextId: "c1", artifact: { artifactId: "a2", parts: [{ url: "file:///p.md" }] } } };
    expect(signals(files).slice(1)).toEqual([{ kind: "artifact", artifact: { artifactId: "a2", parts: [{ url: "file:///p.md" }] } }]);
  });

  it("waits for free text when input-required: the question is text, then one input, then the state", () => {
    const frame = { statusUpdate: { taskId: "t1", contextId: "c1", status: { state: "TASK_STATE_INPUT_REQUIRED", message: question } } };
    const [, text, inputs, state] = signals(frame);
    expect(text).toEqual({ kind: "text", messageId: "t1-question", text: "Which colour?", source: "delta" });
    expect(inputs).toEqual({
      kind: "inputs",
      inputs: [plainAgentInput({ taskId: "t1", state: "input-required", prompt: "Which colour?", messageId: "t1-question" })],
    });
    expect(state).toEqual({ kind: "task-state", state: "input-required" });
  });

  it("names the same input from the stream and from GetTask's snapshot of the parked task", () => {
    const streamed = signals({
      statusUpdate: { taskId: "t1", contextId: "c1", status: { state: "TASK_STATE_INPUT_REQUIRED", message: question } },
    });
    const snapshot = signals({ id: "t1", contextId: "c1", status: { state: "TASK_STATE_INPUT_REQUIRED", message: question } });
    const idOf = (list: ReturnType<typeof signals>) =>
      list.flatMap((s) => (s.kind === "inputs" ? s.inputs.map((i) => i.projection.inputId) : []));
    expect(idOf(streamed)).toHaveLength(1);
    expect(idOf(snapshot)).toEqual(idOf(streamed));
  });

  it("asks for free text on auth-required too, and never for a frame that carries iac-code metadata", () => {
    const auth = signals({ statusUpdate: { taskId: "t1", contextId: "c1", status: { state: "TASK_STATE_AUTH_REQUIRED" } } });
    expect(auth.filter((s) => s.kind === "inputs")).toHaveLength(1);
    const iacCode = signals({
      statusUpdate: {
        taskId: "t1",
        contextId: "c1",
        status: { state: "TASK_STATE_INPUT_REQUIRED" },
        metadata: { iac_code: { iacCodeSessionId: "s" } },
      },
    });
    expect(iacCode.filter((s) => s.kind === "inputs")).toEqual([]);
  });

  it("asks nothing new from a task snapshot that says neither metadata nor a message: the thread's own question stands", () => {
    // A kernel's GetTask of a task parked on an iac-code input may carry no metadata; a resume must not
    // find a made-up second question there (http-specific-messages: a resume of a task that is silent).
    const bare = signals({ task: { id: "t1", contextId: "c1", status: { state: "TASK_STATE_INPUT_REQUIRED" } } });
    expect(bare.filter((s) => s.kind === "inputs")).toEqual([]);
    const asking = signals({ task: { id: "t1", contextId: "c1", status: { state: "TASK_STATE_INPUT_REQUIRED", message: question } } });
    expect(asking.filter((s) => s.kind === "inputs")).toHaveLength(1);
  });

  it("the interrupt takes free text only, and its answer goes to the same task as a text message", () => {
    const { projection } = plainAgentInput({ taskId: "t1", state: "input-required", prompt: "Which colour?", messageId: "q" });
    const pending = { value: projection as InputProjection, sideband: false };
    const interrupt = toInterrupt(pending, "en");
    expect(interrupt).toMatchObject({ id: projection.inputId, reason: "input_required", message: "Which colour?" });
    expect(responseSchemaFor(pending.value)).toEqual({ oneOf: [expect.objectContaining({ required: ["freeText"] })] });
    const answer = validateAnswer(pending, { interruptId: String(projection.inputId), status: "resolved", payload: { freeText: "Blue" } });
    expect(answerMessage(pending, answer, { taskId: "t1", contextId: "c1", runId: "r2" })).toMatchObject({
      call: "stream",
      message: { role: "ROLE_USER", parts: [{ text: "Blue" }], taskId: "t1", contextId: "c1" },
    });
  });

  it("is announced (iac-code.session.v1, no session id) before the first event it shows, so a client can cancel mid-run", async () => {
    const identity = { threadId: "th", runId: "r1", executionId: "e1", contextId: "c1", rosInvocationId: "ros-1" };
    const text = { type: EventType.TEXT_MESSAGE_START, messageId: "m1", role: "assistant" } as const;
    const items = await lastValueFrom(
      of({ kind: "task-bound", taskId: "t1", contextId: "c1" } as const, text).pipe(announceSession(identity), toArray()),
    );
    expect(items.map((item) => ("type" in item ? item.type : item.kind))).toEqual([
      "task-bound",
      EventType.CUSTOM,
      EventType.TEXT_MESSAGE_START,
    ]);
    expect(items[1]).toMatchObject({ name: "iac-code.session.v1", value: { executionId: "e1", taskId: "t1", sessionId: null } });
  });
});
