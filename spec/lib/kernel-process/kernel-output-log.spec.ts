/**
 * What a managed kernel's output and a request's ids do to the service's log
 * (issue 24, items 7 and 11), through the real service running a kernel
 * command: a flood of lines is cut to a budget with a count of what was
 * left out, and line separators and bidirectional controls are written as
 * JSON escapes, never raw.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { KERNEL_OUTPUT_BURST } from "../../../lib/kernel-process/output-budget.js";
import { startService, type RunningService } from "../../../lib/server.js";
import { captureLogs } from "../../support/logs.js";
import { postRun, runInput, testConfig, waitFor } from "../../support/service.js";

const FLOOD_LINES = 50_000;
/** Every control the log must not carry raw: LSEP, PSEP, RLO, LRI, PDI, LRM, RLM, ALM, LRE. */
const CONTROLS = "\u2028\u2029\u202E\u2066\u2069\u200E\u200F\u061C\u202A";
const RAW_CONTROL = /[\u2028\u2029\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C]/;

/**
 * A kernel that prints one line holding every control, then `FLOOD_LINES` lines as fast as its pipe takes them,
 * and answers every request with an empty JSON object (enough for the service to count it started).
 */
const KERNEL = `
const lines = ["controls ${CONTROLS} end"];
for (let i = 0; i < ${FLOOD_LINES}; i++) lines.push("flood " + i);
process.stdout.write(lines.join("\\n") + "\\n");
require("node:http")
  .createServer((_req, res) => res.setHeader("content-type", "application/json").end("{}"))
  .listen(Number(process.argv[1]), "127.0.0.1");
`;

describe("a managed kernel's output in the log", () => {
  let service: RunningService;
  const logs = captureLogs("info");
  beforeAll(async () => {
    service = await startService(
      testConfig({ a2aUrl: undefined, a2aDialect: "1.0", kernelCommand: [process.execPath, "-e", KERNEL, "{port}"] }),
      {
        log: logs.logger,
      },
    );
  });
  afterAll(() => service.close());

  const floodRecords = () => logs.records().filter((record) => /stdout: flood \d+$/.test(record.msg));
  const droppedLines = () =>
    logs.records().reduce((sum, record) => sum + (typeof record.droppedLines === "number" ? record.droppedLines : 0), 0);

  it("logs a flood within its budget, and says how many lines it left out", async () => {
    // Every line is either logged or counted: the counts are told within a second of the flood's end.
    await waitFor(() => floodRecords().length + droppedLines() === FLOOD_LINES);
    expect(floodRecords().length).toBeLessThan(FLOOD_LINES / 10);
    expect(floodRecords().length).toBeGreaterThanOrEqual(KERNEL_OUTPUT_BURST - 1);
    expect(logs.records().find((record) => typeof record.droppedLines === "number")).toMatchObject({
      level: "warn",
      msg: expect.stringMatching(/lines left out of the log$/),
    });
  });

  it("writes line separators and bidirectional controls as escapes, from the kernel's output and from ids", async () => {
    const tricky = `thread-${CONTROLS}-x`;
    await postRun(service.url, runInput("hello", { threadId: tricky, runId: `run-${CONTROLS}` }));
    expect(logs.text()).not.toMatch(RAW_CONTROL);
    // The same JSON: a reader of the records still gets the text as the kernel wrote it.
    expect(logs.records().some((record) => record.msg.endsWith(`stdout: controls ${CONTROLS} end`))).toBe(true);
    expect(logs.records().some((record) => record.threadId === tricky)).toBe(true);
  });
});
