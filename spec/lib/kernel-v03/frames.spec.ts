import { describe, expect, it } from "@jest/globals";
import { FixtureFormatError, parseFixture } from "../../../lib/fixtures/fixture-format.js";
import { answerText, frameKind, toLiveEvent, V03_FRAMES } from "../../../lib/kernel-v03/frames.js";

const ids = { taskId: "task-live", contextId: "ctx-live" };

describe("A2A 0.3 fixture frames", () => {
  it("reads frames told apart by kind, and names the line of a 1.0 frame in a 0.3 fixture", () => {
    const status = { kind: "status-update", taskId: "t", contextId: "c", status: { state: "working" }, final: false };
    expect(parseFixture(JSON.stringify({ frame: status }), "ok.jsonl", V03_FRAMES)[0]!.lines).toEqual([{ delayMs: 0, frame: status }]);
    const v10 = JSON.stringify({ frame: { statusUpdate: { status: { state: "TASK_STATE_WORKING" } } } });
    expect(() => parseFixture(`# a 1.0 frame\n${v10}`, "v10.jsonl", V03_FRAMES)).toThrow(
      new FixtureFormatError('v10.jsonl:2: "frame" must be an object whose "kind" is one of task, status-update, artifact-update, message'),
    );
    expect(frameKind({ kind: "status" })).toBeUndefined();
    expect(frameKind([])).toBeUndefined();
  });

  it("forces the live ids onto a frame and fills the placeholders inside it", () => {
    const task = toLiveEvent({ kind: "task", id: "recorded", contextId: "recorded", status: { state: "submitted" } }, ids);
    expect(task).toMatchObject({ kind: "task", id: "task-live", contextId: "ctx-live" });
    const artifact = toLiveEvent(
      { kind: "artifact-update", taskId: "x", contextId: "y", artifact: { artifactId: "${taskId}-answer", parts: [] }, append: true },
      ids,
    );
    expect(artifact).toEqual({
      kind: "artifact-update",
      taskId: "task-live",
      contextId: "ctx-live",
      artifact: { artifactId: "task-live-answer", parts: [] },
      append: true,
    });
  });

  it("leaves a lone message without a task id, and gives a task's message the live one", () => {
    const message = { kind: "message", messageId: "m", role: "agent", parts: [] };
    expect(toLiveEvent(message, ids)).toEqual({ ...message, contextId: "ctx-live" });
    expect(toLiveEvent({ ...message, taskId: "recorded" }, ids)).toEqual({ ...message, taskId: "task-live", contextId: "ctx-live" });
  });

  it("matches an answer's text, then each data part's JSON, one per line", () => {
    const answer = answerText({
      kind: "message",
      messageId: "m",
      role: "user",
      parts: [
        { kind: "text", text: " blue " },
        { kind: "data", data: { decision: "allow" } },
      ],
    });
    expect(answer).toBe('blue\n{"decision":"allow"}');
  });
});
