/**
 * A resume that reuses the run id of the run that raised its interrupts.
 * CopilotKit resumes so (its interrupt handling pins the interrupted run's
 * `runId` on the resume). The id is unambiguous there: it names the run the
 * answers continue. It is accepted once per pause; a true replay, of either
 * request, stays DUPLICATE_RUN_ID, and any other reuse RUN_ID_CONFLICT.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { EventType, type AGUIEvent, type Interrupt } from "@ag-ui/core";
import type { FixtureLine, ReplayTurn } from "../../lib/kernel/replay-kernel.js";
import { expectValidRun } from "../support/agui.js";
import { interruptScript, permissionProjection, questionProjection } from "../support/interrupt-scripts.js";
import { postRun, runInput, script, startHarness, uniqueId, type Harness } from "../support/service.js";

type Input = ReturnType<typeof runInput>;

const interruptsOf = (events: AGUIEvent[]): Interrupt[] => {
  const last = events.at(-1) as { type: string; outcome?: { type: string; interrupts?: Interrupt[] } };
  expect(last).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "interrupt" } });
  return last.outcome!.interrupts!;
};
const allow = { interruptId: "perm-1", status: "resolved", payload: { decision: "allow_once" } };
const hangzhou = { interruptId: "q-1", status: "resolved", payload: { selectedId: "cn-hangzhou" } };
/** The resume as CopilotKit sends it: the interrupted run's id, the answers, the history so far. */
const resumeReusing = (first: Input, entries: unknown[], extra: Record<string, unknown> = {}) => ({ ...first, resume: entries, ...extra });

/** Turn 0 asks for a permission, turn 1 (its answer) asks a question, turn 2 (that answer) finishes. */
function chainScript() {
  const tasks = new Set<string>();
  const park = (input: Record<string, unknown>): FixtureLine[] => [
    script.status("WORKING", { tool: { status: "started", toolUseId: input.toolUseId, name: input.toolName } }),
    script.status("INPUT_REQUIRED", { input }),
  ];
  return (turn: ReplayTurn): FixtureLine[] | undefined => {
    if (turn.turnIndex === 0) {
      if (!turn.text.startsWith("chain")) return undefined;
      tasks.add(turn.taskId);
      return [script.task(), script.status("WORKING", { iacCodeSessionId: "sess-${contextId}" }), ...park(permissionProjection)];
    }
    if (!tasks.has(turn.taskId)) return undefined;
    if (turn.turnIndex === 1) return park(questionProjection);
    return [script.status("WORKING", undefined, "Deployed in Hangzhou."), script.status("COMPLETED")];
  };
}

describe("a resume that reuses the interrupted run's id", () => {
  let harness: Harness;
  const scripts = [chainScript(), interruptScript("permission", permissionProjection)];
  beforeAll(async () => {
    harness = await startHarness({ script: (turn) => scripts.map((s) => s(turn)).find(Boolean) });
  });
  afterAll(() => harness.close());
  const post = (body: unknown) => postRun(harness.service.url, body);

  async function interrupted(text = "permission"): Promise<Input> {
    const first = runInput(text);
    const { status, events } = await post(first);
    expect(status).toBe(200);
    await expectValidRun(events);
    expect(interruptsOf(events).map((interrupt) => interrupt.id)).toEqual(["perm-1"]);
    return first;
  }

  it("is accepted, once: the answer goes on; replaying it, or the first request, is DUPLICATE_RUN_ID", async () => {
    const first = await interrupted();
    const resume = resumeReusing(first, [allow]);
    const { status, events } = await post(resume);
    expect(status).toBe(200);
    await expectValidRun(events);
    expect(events[0]).toMatchObject({ type: EventType.RUN_STARTED, runId: first.runId });
    expect(events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });

    for (const replay of [resume, first]) {
      const again = await post(replay);
      expect(again.status).toBe(409);
      expect(again.json).toMatchObject({ error: { code: "DUPLICATE_RUN_ID" } });
    }
    const otherAnswer = await post(resumeReusing(first, [{ interruptId: "perm-1", status: "cancelled" }]));
    expect(otherAnswer.status).toBe(409);
    expect(otherAnswer.json).toMatchObject({ error: { code: "RUN_ID_CONFLICT" } });
  });

  it("is accepted once per pause: a run paused again under the same id takes its next answer the same way", async () => {
    const first = await interrupted("chain");
    const toQuestion = await post(resumeReusing(first, [allow]));
    expect(toQuestion.status).toBe(200);
    await expectValidRun(toQuestion.events);
    expect(interruptsOf(toQuestion.events).map((interrupt) => interrupt.id)).toEqual(["q-1"]);

    const done = await post(resumeReusing(first, [hangzhou]));
    expect(done.status).toBe(200);
    await expectValidRun(done.events);
    expect(done.events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });
    // Each request of the chain is still a replay.
    for (const replay of [first, resumeReusing(first, [allow]), resumeReusing(first, [hangzhou])]) {
      expect((await post(replay)).json).toMatchObject({ error: { code: "DUPLICATE_RUN_ID" } });
    }
  });

  it("stays RUN_ID_CONFLICT when the resume failed and is sent again with another body", async () => {
    const first = await interrupted();
    const wrong = await post(resumeReusing(first, [{ interruptId: "perm-1", status: "resolved", payload: { decision: "maybe" } }]));
    expect(wrong.status).toBe(200);
    await expectValidRun(wrong.events);
    expect(wrong.events.at(-1)).toMatchObject({ type: EventType.RUN_ERROR, code: "RESUME_PAYLOAD_INVALID" });
    const retried = await post(resumeReusing(first, [allow]));
    expect(retried.status).toBe(409);
    expect(retried.json).toMatchObject({ error: { code: "RUN_ID_CONFLICT" } });
    // The interrupt is still answerable under a new run id, as the protocol asks.
    const proper = await post(resumeReusing(first, [allow], { runId: uniqueId("run") }));
    expect(proper.status).toBe(200);
    expect(proper.events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });
  });

  it("refuses the id of any other run of the thread, and a new message under the interrupted run's id", async () => {
    const earlier = runInput("chat");
    await expectValidRun((await post(earlier)).events);
    const first = { ...runInput("permission"), threadId: earlier.threadId };
    const { events } = await post(first);
    expect(interruptsOf(events).map((interrupt) => interrupt.id)).toEqual(["perm-1"]);

    const underEarlierId = await post(resumeReusing(first, [allow], { runId: earlier.runId }));
    expect(underEarlierId.status).toBe(409);
    expect(underEarlierId.json).toMatchObject({ error: { code: "RUN_ID_CONFLICT" } });
    const newMessage = await post({ ...first, messages: [{ id: uniqueId("msg"), role: "user", content: "chat" }] });
    expect(newMessage.status).toBe(409);
    expect(newMessage.json).toMatchObject({ error: { code: "RUN_ID_CONFLICT" } });
  });
});
