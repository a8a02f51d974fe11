/**
 * A kernel record over the size that is parsed in slices (`a2a/large-json.ts`):
 * a tool result of 3 MiB full of what a slice must not cut in two (escaped
 * quotes and backslashes, line ends, non-ASCII, surrogate pairs), between
 * ordinary records. The chat a stock HttpAgent ends with shows it exactly,
 * in its place, and the records after it in theirs.
 */
import os from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { LARGE_JSON_CHARS } from "../../lib/a2a/large-json.js";
import { expectValidRun } from "../support/agui.js";
import { httpAgent, runHttpAgent, transcript, userMessage } from "../support/http-agent.js";
import { script, startHarness, uniqueId, type Harness } from "../support/service.js";

const LINE = 'a "quoted" C:\\path\\to\\file, naïve café, 数据 😀\tend\n';
const RESULT = LINE.repeat(Math.ceil((3 * 1024 * 1024) / LINE.length));
const TOOL_CALL = "toolu_large";

describe("a kernel record larger than the slice parser's threshold", () => {
  let harness: Harness;
  beforeAll(async () => {
    const tool = (fields: Record<string, unknown>) => ({ tool: { toolUseId: TOOL_CALL, name: "read_file", ...fields } });
    const lines = [
      script.task(),
      script.status("WORKING", undefined, "Reading it. "),
      script.status("WORKING", tool({ status: "started" })),
      script.status("WORKING", tool({ status: "completed", result: RESULT })),
      script.status("WORKING", undefined, "Read."),
      script.status("COMPLETED"),
    ];
    harness = await startHarness({ script: () => lines });
  });
  afterAll(() => harness.close());

  it("reaches the chat whole and in its place", async () => {
    expect(JSON.stringify(RESULT).length).toBeGreaterThan(LARGE_JSON_CHARS);
    const agent = httpAgent(harness.service.url, { messages: [userMessage("read the file")] });
    const forwardedProps = { iacCode: { schemaVersion: 1, rosInvocationId: "ros-1", cwd: os.tmpdir() } };
    const run = await runHttpAgent(agent, { runId: uniqueId("run"), forwardedProps });
    expect(run.error).toBeUndefined();
    await expectValidRun(run.events);
    const shown = transcript(run.messages);
    expect(shown.map((message) => message.role)).toEqual(["user", "assistant", "tool", "assistant"]);
    expect(shown[1]).toMatchObject({ content: "Reading it. ", toolCalls: [{ id: TOOL_CALL, name: "read_file" }] });
    expect(shown[2]).toEqual({ role: "tool", toolCallId: TOOL_CALL, content: RESULT });
    expect(shown[3]).toMatchObject({ content: "Read." });
  });
});
