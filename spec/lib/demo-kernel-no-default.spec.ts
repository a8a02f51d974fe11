/**
 * The demo kernel in front of a folder without `chat.jsonl` (a recorder's
 * folder, say): free text used to fail with an opaque A2A_EXECUTION_FAILED
 * while the reason (ENOENT) was only in the kernel's log. Through the real
 * service: the RUN_ERROR carries the kernel's reason, the chat shows it, and
 * a fixture name still plays.
 */
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { FIXTURES_DIR } from "../../lib/paths.js";
import { expectValidRun } from "../support/agui.js";
import { httpAgent, runHttpAgent, transcript, userMessage } from "../support/http-agent.js";
import { postRun, runInput, startHarness, type Harness } from "../support/service.js";

describe("the demo kernel in front of a folder without chat.jsonl", () => {
  let harness: Harness;
  let folder: string;

  beforeAll(async () => {
    folder = mkdtempSync(path.join(os.tmpdir(), "agui-recordings-"));
    for (const name of ["permission", "question"])
      copyFileSync(path.join(FIXTURES_DIR, `${name}.jsonl`), path.join(folder, `${name}.jsonl`));
    harness = await startHarness({ fixturesDir: folder });
  });
  afterAll(async () => {
    await harness?.close();
    rmSync(folder, { recursive: true, force: true });
  });

  it("ends free text with a RUN_ERROR that says chat.jsonl is missing and names the folder's fixtures", async () => {
    const { events } = await postRun(harness.service.url, runInput("hello there"));
    await expectValidRun(events);
    expect(events.at(-1)).toMatchObject({
      type: "RUN_ERROR",
      code: "A2A_EXECUTION_FAILED",
      metadata: { "iac-code": { detail: expect.stringMatching(/no chat\.jsonl \(it has: permission, question\)/) } },
    });
  });

  it("shows the same reason in the chat HttpAgent ends with", async () => {
    const agent = httpAgent(harness.service.url, { messages: [userMessage("what can you do?")] });
    const run = await runHttpAgent(agent, { forwardedProps: runInput("").forwardedProps });
    await expectValidRun(run.events);
    expect(transcript(run.messages)).toEqual([
      { role: "user", content: "what can you do?" },
      { role: "assistant", content: expect.stringContaining("has no chat.jsonl (it has: permission, question)") },
    ]);
  });

  it("still plays a fixture the folder has, by name", async () => {
    const { events } = await postRun(harness.service.url, runInput("question"));
    await expectValidRun(events);
    expect(events.at(-1)).toMatchObject({ type: "RUN_FINISHED", outcome: { type: "interrupt" } });
  });
});
