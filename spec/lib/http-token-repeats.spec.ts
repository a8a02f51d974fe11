/**
 * An iac-code kernel streams model tokens, and a token may repeat the one
 * before it ("*" then "*", "1" then "1 file"): the reading of plain agents'
 * cumulative status text (`cumulative-text-as-deltas.ts`) must never take
 * such a run's deltas for a repeated message, or the chat loses text.
 */
import os from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { expectValidRun } from "../support/agui.js";
import { httpAgent, runHttpAgent, userMessage } from "../support/http-agent.js";
import { script, startHarness, uniqueId, type Harness } from "../support/service.js";

describe("an iac-code kernel's repeated tokens", () => {
  let harness: Harness;
  beforeAll(async () => {
    const tokens = ["*", "*", "bold", "*", "*", " and ", "1", "1 files"];
    harness = await startHarness({
      script: () => [
        script.task(),
        script.status("WORKING", { iacCodeSessionId: "session-tokens" }),
        ...tokens.map((token) => script.status("WORKING", undefined, token)),
        script.status("COMPLETED"),
      ],
    });
  });
  afterAll(() => harness.close());

  it("reach the chat each as it came", async () => {
    const agent = httpAgent(harness.service.url, { messages: [userMessage("format it")] });
    const forwardedProps = { iacCode: { schemaVersion: 1, rosInvocationId: "ros-1", cwd: os.tmpdir() } };
    const run = await runHttpAgent(agent, { runId: uniqueId("run"), forwardedProps });
    expect(run.error).toBeUndefined();
    await expectValidRun(run.events);
    expect(run.messages.filter((message) => message.role === "assistant").map((message) => message.content)).toEqual([
      "**bold** and 11 files",
    ]);
  });
});
