/**
 * The data parts of a message from an agent without iac-code metadata
 * (`lib/model/agent-message-parts.ts`, read by `toKernelSignals`): the
 * tool-call convention other A2A bridges use becomes tool signals, in the
 * order of the parts, and the rest one `message-data` signal; then, through
 * the run's chain, TOOL_CALL_* and CUSTOM `iac-code.message-data.v1`.
 */
import { describe, expect, it } from "@jest/globals";
import { EventType, type AGUIEvent } from "@ag-ui/core";
import { from } from "rxjs";
import type { JsonRpcResult } from "../../lib/a2a/client.js";
import { messageFromV03 } from "../../lib/a2a/dialect-v03.js";
import { kernelInputsOf } from "../../lib/interrupts/keep-input.js";
import { signalsOf } from "../../operators/to-kernel-signals.js";
import { toA2AUpdate } from "../../operators/unwrap-stream-response.js";
import { expectValidRun } from "../support/agui.js";
import { project } from "../support/chain-properties.js";

const signals = (frame: Record<string, unknown>) =>
  signalsOf(toA2AUpdate(frame), { newToolId: () => "tool-x", findInputs: kernelInputsOf }).filter(
    (signal) => signal.kind !== "task-bound" && signal.kind !== "task-state",
  );
const working = (message: Record<string, unknown>, metadata?: Record<string, unknown>) => ({
  statusUpdate: { taskId: "t1", contextId: "c1", status: { state: "TASK_STATE_WORKING", message }, ...(metadata ? { metadata } : {}) },
});
const agentMessage = (messageId: string, parts: unknown[]) => ({ messageId, role: "ROLE_AGENT", parts });
const toolCall = (id: string, args: unknown = { city: "Hangzhou" }) => ({
  data: { type: "tool-call", id, name: "get_weather", arguments: args },
  mediaType: "application/json",
});
const toolResult = (toolCallId: string, payload: unknown = { temperatureC: 21 }) => ({
  data: { type: "tool-result", toolCallId, payload },
  mediaType: "application/json",
});
const text = (words: string, messageId = "m1", source = "delta") => ({ kind: "text", messageId, text: words, source });

describe("a plain agent's message data parts, as signals", () => {
  it("reads a tool call and its result between the words around them, in the order of the parts", () => {
    const parts = [{ text: "Let me " }, { text: "look." }, toolCall("call-1"), toolResult("call-1"), { text: "It is 21 °C." }];
    expect(signals(working(agentMessage("m1", parts)))).toEqual([
      text("Let me look."),
      {
        kind: "tool",
        status: "input_complete",
        toolCallId: "call-1",
        toolName: "get_weather",
        input: { city: "Hangzhou" },
        result: undefined,
      },
      { kind: "tool", status: "completed", toolCallId: "call-1", toolName: "tool", input: undefined, result: { temperatureC: 21 } },
      text("It is 21 °C."),
    ]);
  });

  it("fills what a tool part leaves out: an id, a name, the arguments; a result without payload is the part's data", () => {
    const bare = { data: { type: "tool-call" } };
    const noPayload = { data: { type: "tool-result", toolCallId: "call-2", output: "done" } };
    expect(signals(working(agentMessage("m1", [bare, noPayload])))).toEqual([
      { kind: "tool", status: "input_complete", toolCallId: "tool-x", toolName: "tool", input: {}, result: undefined },
      { kind: "tool", status: "completed", toolCallId: "call-2", toolName: "tool", input: undefined, result: noPayload.data },
    ]);
  });

  it("sends the other data parts as one message-data signal after the rest: the message with those parts only", () => {
    const card = { data: { city: "Hangzhou", sky: "clear" }, mediaType: "application/json" };
    const orphanResult = { data: { type: "tool-result", payload: 1 } };
    const message = { ...agentMessage("m1", [card, { text: "Sunny." }, orphanResult, toolCall("call-3")]), metadata: { source: "x" } };
    expect(signals(working(message))).toEqual([
      text("Sunny."),
      {
        kind: "tool",
        status: "input_complete",
        toolCallId: "call-3",
        toolName: "get_weather",
        input: { city: "Hangzhou" },
        result: undefined,
      },
      { kind: "message-data", message: { ...message, parts: [card, orphanResult] } },
    ]);
  });

  it("reads a 0.3 agent's kinded data parts the same, once the dialect has mapped them", () => {
    const v03 = messageFromV03({
      kind: "message",
      messageId: "m1",
      role: "agent",
      parts: [{ kind: "data", data: { type: "tool-call", id: "call-4", name: "get_weather", arguments: { city: "Hangzhou" } } }],
    });
    expect(signals(working(v03))).toEqual([
      {
        kind: "tool",
        status: "input_complete",
        toolCallId: "call-4",
        toolName: "get_weather",
        input: { city: "Hangzhou" },
        result: undefined,
      },
    ]);
  });

  it("reads a bare message reply's parts too; its text, cut by a tool part, as deltas", () => {
    const reply = { message: agentMessage("m9", [{ text: "Checking." }, toolCall("call-5"), { text: "Done." }]) };
    expect(signals(reply).map((signal) => (signal.kind === "text" ? signal : signal.kind))).toEqual([
      text("Checking.", "m9"),
      "tool",
      text("Done.", "m9"),
    ]);
    const whole = { message: agentMessage("m9", [{ text: "All of it." }, { data: { n: 1 } }]) };
    expect(signals(whole).map((signal) => signal.kind)).toEqual(["text", "message-data"]);
    expect(signals(whole)[0]).toEqual(text("All of it.", "m9", "final"));
  });

  it("leaves data parts alone where they are not the agent's news: the iac-code kernel's frames, a task snapshot, a permission's acknowledgement", () => {
    const withData = agentMessage("m1", [{ text: "Hi" }, toolCall("call-6"), { data: { n: 1 } }]);
    expect(signals(working(withData, { iac_code: { iacCodeSessionId: "s1" } }))).toEqual([
      { kind: "session-bound", sessionId: "s1" },
      text("Hi"),
    ]);
    const snapshot = { task: { id: "t1", contextId: "c1", status: { state: "TASK_STATE_WORKING", message: withData } } };
    expect(signals(snapshot)).toEqual([text("Hi")]);
    const ack = { data: { schemaVersion: 1, kind: "permission_ack", inputId: "i1", accepted: true } };
    expect(signals(working(agentMessage("m1", [{ text: "Ok" }, ack])))).toEqual([text("Ok")]);
  });
});

describe("a plain agent's tool-call data parts, through the run's chain", () => {
  const frames = (...messages: Array<Record<string, unknown>>): JsonRpcResult[] => [
    { task: { id: "t1", contextId: "c1", status: { state: "TASK_STATE_SUBMITTED" } } },
    ...messages.map((message) => working(message) as JsonRpcResult),
    { statusUpdate: { taskId: "t1", contextId: "c1", status: { state: "TASK_STATE_COMPLETED" } } },
  ];
  const ofType = (events: AGUIEvent[], ...types: EventType[]) => events.filter((event) => types.includes(event.type));

  it("shows the call in the message that announced it, its result below, then the words after it in a message of their own", async () => {
    const events = await project(
      from(
        frames(
          agentMessage("m1", [{ text: "Let me look." }, toolCall("call-1")]),
          agentMessage("m2", [toolResult("call-1")]),
          agentMessage("m3", [{ text: "It is 21 °C." }, { data: { city: "Hangzhou" } }]),
        ),
      ),
      { runId: "r1" },
    );
    await expectValidRun(events);
    expect(
      ofType(events, EventType.TEXT_MESSAGE_START, EventType.TOOL_CALL_START, EventType.TOOL_CALL_ARGS, EventType.TOOL_CALL_RESULT),
    ).toEqual([
      expect.objectContaining({ type: EventType.TEXT_MESSAGE_START, messageId: "r1:m1" }),
      expect.objectContaining({
        type: EventType.TOOL_CALL_START,
        toolCallId: "call-1",
        toolCallName: "get_weather",
        parentMessageId: "r1:m1",
      }),
      expect.objectContaining({ type: EventType.TOOL_CALL_ARGS, toolCallId: "call-1", delta: '{"city":"Hangzhou"}' }),
      expect.objectContaining({ type: EventType.TOOL_CALL_RESULT, toolCallId: "call-1", content: '{"temperatureC":21}', role: "tool" }),
      expect.objectContaining({ type: EventType.TEXT_MESSAGE_START, messageId: "r1:m3:after:call-1" }),
    ]);
    expect(ofType(events, EventType.CUSTOM)).toContainEqual(
      expect.objectContaining({
        name: "iac-code.message-data.v1",
        value: { schemaVersion: 1, messageId: "m3", role: "ROLE_AGENT", parts: [{ data: { city: "Hangzhou" } }] },
      }),
    );
  });

  it("opens a call told again (an agent repeating its message's parts) only once", async () => {
    const again = agentMessage("m1", [toolCall("call-1")]);
    const events = await project(from(frames(again, again, agentMessage("m2", [toolResult("call-1")]), again)), { runId: "r1" });
    await expectValidRun(events);
    expect(
      ofType(events, EventType.TOOL_CALL_START, EventType.TOOL_CALL_ARGS, EventType.TOOL_CALL_END, EventType.TOOL_CALL_RESULT).map(
        (e) => e.type,
      ),
    ).toEqual([EventType.TOOL_CALL_START, EventType.TOOL_CALL_ARGS, EventType.TOOL_CALL_END, EventType.TOOL_CALL_RESULT]);
  });
});
