/**
 * Terminal control and bidirectional overrides never reach a client, in
 * any event: not as raw characters in text, and not spelled as JSON escapes
 * inside tool arguments, which a client parses back into raw characters.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { EventType, type AGUIEvent } from "@ag-ui/core";
import { expectValidRun } from "../support/agui.js";
import { postRun, runInput, script, startHarness, type Harness } from "../support/service.js";

const ESC = "\x1b";
const BEL = "\x07";
const RLO = "\u202e";
const hostile = `rm ${ESC}[2J-rf${BEL} ${RLO}txt.exe`;

describe("neutralized output", () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness({
      script: () => [
        script.task(),
        script.status("WORKING", { tool: { status: "started", toolUseId: "u1", name: "shell" } }),
        script.status("WORKING", { tool: { status: "input_complete", toolUseId: "u1", name: "shell", toolInput: { command: hostile } } }),
        script.status("WORKING", { tool: { status: "completed", toolUseId: "u1", name: "shell", result: hostile } }),
        script.status("COMPLETED", undefined, `done ${RLO}fdp.exe`),
      ],
    });
  });
  afterAll(() => harness.close());

  it("reach no client raw: not in text, tool results, nor inside the parsed tool arguments", async () => {
    const { events } = await postRun(harness.service.url, runInput("anything"));
    await expectValidRun(events);
    const args = events
      .filter((event): event is Extract<AGUIEvent, { type: EventType.TOOL_CALL_ARGS }> => event.type === EventType.TOOL_CALL_ARGS)
      .map((event) => event.delta)
      .join("");
    const parsed = JSON.parse(args) as { command: string };
    for (const text of [parsed.command, JSON.stringify(events)]) {
      expect(text).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/);
    }
    expect(parsed.command).toContain("rm");
    expect(parsed.command).toContain("txt.exe");
  });
});
