/**
 * Nothing is announced that cannot be loaded back (R-PER-4, R-INT-3): a
 * pause too large to keep (its interrupts as shown, see
 * `lib/threads/interrupt-sizes.ts`, or its state past MAX_JSON_FILE_BYTES)
 * is refused before it is written, so the run that would have paused on it
 * fails instead, and the thread stays usable. `http-interrupt-sizes.spec.ts`
 * holds both stores to the same outcome.
 */
import { readdirSync, statSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { EventType } from "@ag-ui/core";
import type { ReplayTurn } from "../../lib/kernel/replay-kernel.js";
import { MAX_JSON_FILE_BYTES } from "../../lib/state/atomic-json-adapter.js";
import { expectValidRun } from "../support/agui.js";
import { postRun, runInput, script, startHarness, uniqueId, waitFor, type Harness } from "../support/service.js";

const OPTION_COUNT = 50_000;

/** A question whose options alone make a thread file of several MiB. */
const hugeQuestion = {
  schemaVersion: 1,
  kind: "ask_user_question",
  requestTaskId: "${taskId}",
  contextId: "${contextId}",
  inputId: "q-huge",
  toolUseId: "toolu-huge",
  toolName: "AskUserQuestion",
  prompt: "Which one?",
  required: true,
  options: Array.from({ length: OPTION_COUNT }, (_, i) => ({ id: `option-${i}`, label: `Option number ${i} of a very long list` })),
};

const parksOnHugeQuestion = (turn: ReplayTurn) =>
  turn.turnIndex === 0 && turn.text === "huge-question"
    ? [
        script.task(),
        script.status("WORKING", { iacCodeSessionId: "sess-${contextId}" }, "Let me ask. "),
        script.status("INPUT_REQUIRED", { input: hugeQuestion }),
      ]
    : undefined;

describe("a pause whose state would not load back", () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness({ script: parksOnHugeQuestion });
  });
  afterAll(() => harness.close());

  it("ends with RUN_ERROR STATE_PERSISTENCE_FAILED, cancels the task, and the thread's next message runs", async () => {
    const first = runInput("huge-question");
    const paused = await postRun(harness.service.url, first);
    await expectValidRun(paused.events);
    expect(paused.events.at(-1)).toMatchObject({ type: EventType.RUN_ERROR, code: "STATE_PERSISTENCE_FAILED" });
    expect(paused.events.some((event) => event.type === EventType.RUN_FINISHED)).toBe(false);

    const session = paused.events.find((event) => event.type === EventType.CUSTOM && event.name === "iac-code.session.v1");
    const { taskId } = (session as { value: { taskId: string } }).value;
    await waitFor(() =>
      harness.kernel.received.some((call) => call.method === "CancelTask" && (call.params as { id: string }).id === taskId),
    );

    // Every file on disk is one the store reads back.
    const threads = path.join(harness.stateDir, "threads");
    for (const file of readdirSync(threads)) expect(statSync(path.join(threads, file)).size).toBeLessThanOrEqual(MAX_JSON_FILE_BYTES);

    const next = await postRun(harness.service.url, { ...runInput("chat"), threadId: first.threadId, runId: uniqueId("run") });
    expect(next.status).toBe(200);
    await expectValidRun(next.events);
    expect(next.events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });
  });
});
