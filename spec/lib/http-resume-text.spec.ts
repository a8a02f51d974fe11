/**
 * After a resume the kernel repeats, at the start of a message, the text the
 * client already has (contract §6): only what follows is shown. The state
 * keeps each message's digest with its length, so a long repeated text is
 * found in one pass; a state written before lengths were kept (bare
 * digests) still resumes the same way.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { EventType, type AGUIEvent } from "@ag-ui/core";
import type { FixtureLine, ReplayTurn } from "../../lib/kernel/replay-kernel.js";
import { expectValidRun } from "../support/agui.js";
import { permissionProjection } from "../support/interrupt-scripts.js";
import { postRun, runInput, script, startHarness, uniqueId, type Harness } from "../support/service.js";

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");
const shown = (events: AGUIEvent[]) =>
  events
    .filter((event) => event.type === EventType.TEXT_MESSAGE_CONTENT)
    .map((event) => (event as { delta: string }).delta)
    .join("");

/** The text turn 0 says, by the user text that asks for it: `short`, or `long` (1 MiB with astral characters). */
const SAID: Record<string, string> = {
  short: "I will deploy the 🚀 stack. ",
  long: "Deploying 🚀 stack demo-vpc, resource by resource. ".repeat(21_000),
};
const ADDED = "Done.";

/** `text` in deltas of DELTA_UNITS UTF-16 units; for the long text, some cuts fall inside a surrogate pair. */
const DELTA_UNITS = 10_001;
const deltasOf = (text: string): FixtureLine[] =>
  Array.from({ length: Math.ceil(text.length / DELTA_UNITS) }, (_, index) =>
    script.status("WORKING", undefined, text.slice(index * DELTA_UNITS, (index + 1) * DELTA_UNITS)),
  );
const cutsInsidePairs = (text: string) =>
  Array.from({ length: Math.floor(text.length / DELTA_UNITS) }, (_, index) => (index + 1) * DELTA_UNITS).filter(
    (cut) => /[\ud800-\udbff]/.test(text[cut - 1]!) && /[\udc00-\udfff]/.test(text[cut]!),
  );

/** Turn 0 says SAID[text] and parks on a permission; the resume repeats all of it in its first text, then adds ADDED. */
function repeatingKernel() {
  const said = new Map<string, string>();
  return (turn: ReplayTurn): FixtureLine[] | undefined => {
    if (turn.turnIndex === 0) {
      const text = SAID[turn.text];
      if (text === undefined) return undefined;
      said.set(turn.taskId, text);
      return [
        script.task(),
        script.status("WORKING", { iacCodeSessionId: "sess-${contextId}" }),
        ...deltasOf(text),
        script.status("WORKING", { tool: { status: "started", toolUseId: "toolu-deploy", name: "ros_deploy_stack" } }),
        script.status("INPUT_REQUIRED", { input: permissionProjection }),
      ];
    }
    const text = said.get(turn.taskId);
    if (text === undefined) return undefined;
    return [
      script.status("WORKING", { tool: { status: "completed", toolUseId: "toolu-deploy", name: "ros_deploy_stack", result: "ok" } }),
      script.status("WORKING", undefined, text + ADDED),
      script.status("COMPLETED"),
    ];
  };
}

describe("a resumed message that repeats the text the client has", () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness({ script: repeatingKernel() });
  });
  afterAll(() => harness.close());

  const threadFile = (threadId: string) =>
    readdirSync(path.join(harness.stateDir, "threads"))
      .map((file) => path.join(harness.stateDir, "threads", file))
      .find((file) => file.endsWith(".json") && readFileSync(file, "utf8").includes(threadId))!;

  async function parked(name: string) {
    const first = runInput(name);
    const { events } = await postRun(harness.service.url, first);
    await expectValidRun(events);
    expect(events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "interrupt" } });
    expect(shown(events)).toBe(SAID[name]);
    return first;
  }

  const resume = async (first: ReturnType<typeof runInput>) => {
    const { events } = await postRun(harness.service.url, {
      ...first,
      runId: uniqueId("run"),
      resume: [{ interruptId: "perm-1", status: "resolved", payload: { decision: "allow_once" } }],
    });
    await expectValidRun(events);
    expect(events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });
    return events;
  };

  it("keeps the digest of each message's text with its length, and no text", async () => {
    const first = await parked("short");
    const stored = readFileSync(threadFile(first.threadId), "utf8");
    const said = SAID.short!;
    expect(JSON.parse(stored).execution.textSnapshotDigests).toEqual([`${sha256(said)}:${said.length}`]);
    expect(stored).not.toContain("deploy the");
  });

  it("shows only the new text after 1 MiB repeated, astral characters cut across the deltas it first came in", async () => {
    expect(cutsInsidePairs(SAID.long!).length).toBeGreaterThan(0);
    const first = await parked("long");
    expect(shown(await resume(first))).toBe(ADDED);
  });

  it("resumes a state written before lengths were kept (bare digests) the same way", async () => {
    const first = await parked("short");
    const file = threadFile(first.threadId);
    const state = JSON.parse(readFileSync(file, "utf8"));
    state.execution.textSnapshotDigests = [sha256(SAID.short!)];
    writeFileSync(file, JSON.stringify(state));
    expect(shown(await resume(first))).toBe(ADDED);
  });
});
