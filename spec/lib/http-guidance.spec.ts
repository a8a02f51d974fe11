/**
 * Guidance runs (issue 13) through the real service and the demo kernel: a
 * slow pipeline run is steered while it runs. The guidance stream is
 * RUN_STARTED then RUN_FINISHED and nothing else, the kernel receives the
 * user's parts on the running task with guidance_id and input_digest, the
 * steered run still finishes, and the run id of the guidance is kept.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "@jest/globals";
import { EventType, type AGUIEvent } from "@ag-ui/core";
import { expectValidRun } from "../support/agui.js";
import { openRun, parseSse } from "../support/service-process.js";
import { postRun, runInput, startHarness, uniqueId, type Harness } from "../support/service.js";

const PIPELINE = { runMode: "pipeline" };
const guidanceProps = (guidanceId: string) => ({ ...PIPELINE, activeGuidance: true, guidanceId, inputDigest: `digest-of-${guidanceId}` });

interface SentMessage {
  message: { messageId: string; taskId?: string; parts: unknown[]; metadata: { iac_code: Record<string, unknown> } };
}

describe("guidance runs", () => {
  let harness: Harness;

  /**
   * The main runs' first turns hold their last line (the COMPLETED status)
   * until the test has acted on the running task: however slow the machine,
   * the task is still running when the guidance arrives.
   */
  let releaseMainRuns: () => void = () => undefined;
  let mainRunsHeld = new Promise<void>((resolve) => (releaseMainRuns = resolve));
  const holdMainRuns = () => {
    releaseMainRuns();
    mainRunsHeld = new Promise<void>((resolve) => (releaseMainRuns = resolve));
  };

  beforeAll(async () => {
    harness = await startHarness({
      holdLine: (turn, index, count) =>
        turn.text === "slow-chat" && turn.turnIndex === 0 && index === count - 1 ? mainRunsHeld : undefined,
    });
  });
  afterEach(holdMainRuns);
  afterAll(() => harness.close());

  /**
   * Starts a main run and reads it until its session event names the task,
   * as a client learns it: the thread's run has taken the task on by then
   * (a state file on disk can be ahead of the run that wrote it). The rest
   * of the stream, once the test lets the run end, is `rest`.
   */
  const startMainRun = async (input: ReturnType<typeof runInput>) => {
    const run = await openRun(harness.service.url, input, (raw) => raw.includes("iac-code.session.v1"));
    const session = (await parseSse(run.raw)).find((event) => event.type === EventType.CUSTOM && event.name === "iac-code.session.v1");
    const { taskId } = (session as { value: { taskId: string } }).value;
    const rest = async (): Promise<AGUIEvent[]> => parseSse(await run.rest);
    return { taskId, rest };
  };

  const sentMessage = (messageId: string) =>
    harness.kernel.received
      .filter((call) => call.method === "SendStreamingMessage")
      .map((call) => call.params as SentMessage)
      .find((params) => params.message.messageId === messageId)?.message;

  it("steers a running pipeline: RUN_STARTED and RUN_FINISHED only, the parts on the bound task, the main run finishes", async () => {
    const main = runInput("slow-chat", {}, PIPELINE);
    const mainRun = await startMainRun(main);
    const { taskId } = mainRun;

    const guidance = runInput("Deploy to cn-beijing instead", { threadId: main.threadId }, guidanceProps("g-1"));
    const steered = await postRun(harness.service.url, guidance);
    expect(steered.status).toBe(200);
    await expectValidRun(steered.events);
    expect(steered.events.map((event) => event.type)).toEqual([EventType.RUN_STARTED, EventType.RUN_FINISHED]);
    expect(steered.events[1]).toMatchObject({ threadId: main.threadId, runId: guidance.runId, outcome: { type: "success" } });

    const sent = sentMessage(guidance.messages[0]!.id);
    expect(sent).toMatchObject({ taskId, parts: [{ text: "Deploy to cn-beijing instead" }] });
    expect(sent!.metadata.iac_code).toMatchObject({ guidance_id: "g-1", input_digest: "digest-of-g-1", run_mode: "pipeline" });

    releaseMainRuns();
    const events = await mainRun.rest();
    await expectValidRun(events);
    expect(events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, runId: main.runId });
    expect(events.some((event) => event.type === EventType.TEXT_MESSAGE_CONTENT)).toBe(true);

    // Its run id is kept: the same request again is a duplicate, another under that id a conflict.
    const again = await postRun(harness.service.url, guidance);
    expect(again.status).toBe(409);
    expect(again.json).toMatchObject({ error: { code: "DUPLICATE_RUN_ID" } });
    const reused = await postRun(harness.service.url, { ...guidance, messages: [{ id: uniqueId("msg"), role: "user", content: "other" }] });
    expect(reused.json).toMatchObject({ error: { code: "RUN_ID_CONFLICT" } });
  });

  it("takes images as a new turn does: one that cannot be decoded is a 400, and nothing reaches the running task", async () => {
    const main = runInput("slow-chat", {}, PIPELINE);
    const mainRun = await startMainRun(main);
    const png = Buffer.from("\x89PNG\r\n\x1a\n not really").toString("base64");
    const guidance = runInput(
      "ignored",
      {
        threadId: main.threadId,
        messages: [
          {
            id: uniqueId("msg"),
            role: "user",
            content: [
              { type: "text", text: "Use this diagram" },
              { type: "image", source: { type: "data", value: png, mimeType: "image/png" } },
            ],
          },
        ],
      },
      guidanceProps("g-image"),
    );
    const refused = await postRun(harness.service.url, guidance);
    expect(refused.status).toBe(400);
    expect(refused.json).toMatchObject({ error: { code: "INVALID_INPUT" } });
    expect(sentMessage(guidance.messages[0]!.id)).toBeUndefined();
    releaseMainRuns();
    await expectValidRun(await mainRun.rest());
  });

  it("is refused with 409 EXECUTION_LOST, as the reference adapter refuses it, on a thread whose task is not running", async () => {
    const done = runInput("chat", {}, PIPELINE);
    await expectValidRun((await postRun(harness.service.url, done)).events);
    const late = await postRun(harness.service.url, runInput("steer", { threadId: done.threadId }, guidanceProps("g-2")));
    expect(late.status).toBe(409);
    expect(late.json).toMatchObject({ error: { code: "EXECUTION_LOST", message: "The execution to resume is no longer available." } });

    const never = await postRun(harness.service.url, runInput("steer", {}, { ...guidanceProps("g-3"), preferredLanguage: "ja" }));
    expect(never.status).toBe(409);
    expect(never.json).toMatchObject({ error: { code: "EXECUTION_LOST", message: expect.stringContaining("実行") } });
  });

  it("outside pipeline mode is refused 409 EXECUTION_LOST, never run as a new turn", async () => {
    const before = harness.kernel.received.length;
    const guidance = runInput("steer", {}, { activeGuidance: true, guidanceId: "g-4", inputDigest: "digest-of-g-4" });
    const refused = await postRun(harness.service.url, guidance);
    expect(refused.status).toBe(409);
    expect(refused.json).toMatchObject({ error: { code: "EXECUTION_LOST" } });
    expect(harness.kernel.received.length).toBe(before);
  });

  it("needs no guidanceId nor inputDigest: a guidance without them steers the running task", async () => {
    const main = runInput("slow-chat", {}, PIPELINE);
    const mainRun = await startMainRun(main);
    const guidance = runInput("Use two zones", { threadId: main.threadId }, { ...PIPELINE, activeGuidance: true });
    const steered = await postRun(harness.service.url, guidance);
    await expectValidRun(steered.events);
    expect(steered.events.map((event) => event.type)).toEqual([EventType.RUN_STARTED, EventType.RUN_FINISHED]);
    expect(sentMessage(guidance.messages[0]!.id)).toMatchObject({ taskId: mainRun.taskId, parts: [{ text: "Use two zones" }] });
    releaseMainRuns();
    await expectValidRun(await mainRun.rest());
  });

  it("on a thread waiting for answers is refused 409 RESUME_REQUIRED, naming them", async () => {
    const paused = runInput("permission", {}, PIPELINE);
    const { events } = await postRun(harness.service.url, paused);
    expect(events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "interrupt" } });
    const refused = await postRun(harness.service.url, runInput("steer", { threadId: paused.threadId }, guidanceProps("g-5")));
    expect(refused.status).toBe(409);
    expect(refused.json).toMatchObject({
      error: { code: "RESUME_REQUIRED", interrupts: [expect.objectContaining({ reason: "tool_call" })] },
    });
  });
});
