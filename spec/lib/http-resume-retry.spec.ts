/**
 * The resume preflight's two answers that are not errors (contract §5,
 * issue 13), through the real service and the demo kernel:
 * - a retried resume that repeats an answer the kernel already accepted,
 *   with the same digest, skips it and sends the rest; a different answer
 *   to that interrupt stays RESUME_ALREADY_APPLIED (differentAnswer);
 * - inputs GetTask shows that the thread does not know yet are announced as
 *   fresh interrupts, and nothing is sent.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { EventType, type AGUIEvent, type Interrupt } from "@ag-ui/core";
import type { FixtureLine, ReplayKernel, ReplayTurn } from "../../lib/kernel/replay-kernel.js";
import { startReplayKernel } from "../../lib/kernel/replay-kernel.js";
import { startService, type RunningService } from "../../lib/server.js";
import { LOCALES_DIR } from "../../lib/paths.js";
import { readFileSync } from "node:fs";
import path from "node:path";
import { expectValidRun } from "../support/agui.js";
import { startDroppingProxy, type DroppingProxy } from "../support/dropping-proxy.js";
import { httpAgent, runHttpAgent, transcript, userMessage } from "../support/http-agent.js";
import { permissionProjection } from "../support/interrupt-scripts.js";
import { postRun, runInput, script, testConfig, uniqueId } from "../support/service.js";

type Input = ReturnType<typeof runInput>;

const deleteProjection = {
  ...permissionProjection,
  inputId: "perm-2",
  toolUseId: "toolu-delete",
  toolName: "ros_delete_stack",
  title: "Delete stack old-vpc",
  prompt: "Allow deleting stack old-vpc?",
  target: "old-vpc",
};

/**
 * Turn 0 parks on perm-1 (`input`), and on perm-2 too (`pendingPermissions`)
 * when the text starts with "two-waits". The answer to perm-1 plays turn 1,
 * which still waits on perm-2; the answer to perm-2 plays turn 2, which
 * completes the task.
 */
function twoWaits(tasks: Map<string, { taskId: string; contextId: string }>) {
  return (turn: ReplayTurn): FixtureLine[] => {
    if (turn.turnIndex === 1) return [script.status("WORKING", undefined, "Deploying demo-vpc. "), script.status("INPUT_REQUIRED")];
    if (turn.turnIndex === 2) return [script.status("WORKING", undefined, "Deleted old-vpc."), script.status("COMPLETED")];
    tasks.set(turn.text, { taskId: turn.taskId, contextId: turn.contextId });
    const waits = turn.text.startsWith("two-waits")
      ? { input: permissionProjection, pendingPermissions: [deleteProjection] }
      : { input: permissionProjection };
    return [
      script.task(),
      script.status("WORKING", { iacCodeSessionId: "sess-${contextId}" }, "Two changes to make. "),
      script.status("INPUT_REQUIRED", waits),
    ];
  };
}

const english = JSON.parse(readFileSync(path.join(LOCALES_DIR, "en.json"), "utf8")) as Record<string, string>;
const interruptsOf = (events: AGUIEvent[]): Interrupt[] =>
  ((events.at(-1) as { outcome?: { interrupts?: Interrupt[] } }).outcome?.interrupts ?? []) as Interrupt[];
const allowDeploy = { interruptId: "perm-1", status: "resolved" as const, payload: { decision: "allow_once" } };
const denyDeploy = { interruptId: "perm-1", status: "resolved" as const, payload: { decision: "deny" } };
const allowDelete = { interruptId: "perm-2", status: "resolved" as const, payload: { decision: "allow_once" } };
/** The permission answers (their inputIds) among the kernel's calls. */
const answersIn = (calls: ReplayKernel["received"], method: string) =>
  calls
    .filter((call) => call.method === method)
    .map((call) => JSON.stringify(call.params).match(/"inputId":"(perm-\d)"/)?.[1] ?? "no permission answer");

describe("a retried or outdated resume, through the real service and demo kernel", () => {
  const tasks = new Map<string, { taskId: string; contextId: string }>();
  let kernel: ReplayKernel;
  let proxy: DroppingProxy;
  let service: RunningService;
  beforeAll(async () => {
    kernel = await startReplayKernel({ timeScale: 0, script: twoWaits(tasks) });
    proxy = await startDroppingProxy(kernel.url);
    service = await startService(testConfig({ a2aUrl: proxy.url, interruptTtlS: 600 }));
  });
  afterAll(async () => {
    await service.close();
    await proxy.close();
    await kernel.close();
  });
  const post = (body: unknown) => postRun(service.url, body);
  const resume = (first: Input, entries: unknown[]) => ({ ...first, runId: uniqueId("run"), resume: entries });
  const kernelTaskState = async (taskId: string) => {
    const response = await fetch(kernel.url, {
      method: "POST",
      headers: { "content-type": "application/json", "a2a-version": "1.0" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: taskId } }),
    });
    return ((await response.json()) as { result?: { status?: { state?: string } } }).result?.status?.state;
  };
  const completed = async (taskId: string, deadline = Date.now() + 5000) => {
    while ((await kernelTaskState(taskId)) !== "TASK_STATE_COMPLETED") {
      if (Date.now() > deadline) throw new Error(`task ${taskId} did not complete`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };

  it("a retry skips the answer the kernel accepted and sends the rest; a different answer to it is RESUME_ALREADY_APPLIED", async () => {
    const text = `two-waits ${uniqueId("t")}`;
    const first = runInput(text);
    const agent = httpAgent(service.url, { threadId: first.threadId, messages: [userMessage(text)] });
    const run = (resumeEntries?: Array<typeof allowDeploy>) =>
      runHttpAgent(agent, {
        runId: uniqueId("run"),
        forwardedProps: first.forwardedProps,
        ...(resumeEntries ? { resume: resumeEntries } : {}),
      });

    const parked = await run();
    await expectValidRun(parked.events);
    expect(interruptsOf(parked.events).map((interrupt) => interrupt.id)).toEqual(["perm-1", "perm-2"]);

    // The kernel takes the answer to perm-1; the call carrying perm-2's never reaches it.
    proxy.dropWhen((body) => body.includes('"SendStreamingMessage"') && body.includes('"inputId":"perm-2"'));
    let before = kernel.received.length;
    const cut = await run([allowDeploy, allowDelete]);
    proxy.dropWhen(undefined);
    await expectValidRun(cut.events);
    expect(cut.events.at(-1)).toMatchObject({ type: EventType.RUN_ERROR, code: "A2A_UNAVAILABLE" });
    expect(proxy.dropped).toBe(1);
    expect(answersIn(kernel.received.slice(before), "SendStreamingMessage")).toEqual(["perm-1"]);

    // perm-1 was accepted: answering it differently now is refused, and nothing reaches the kernel.
    before = kernel.received.length;
    const changed = await post(resume(first, [denyDeploy, allowDelete]));
    await expectValidRun(changed.events);
    expect(changed.events.at(-1)).toMatchObject({
      type: EventType.RUN_ERROR,
      code: "RESUME_ALREADY_APPLIED",
      message: english.RESUME_ALREADY_APPLIED,
      metadata: { "iac-code": { detail: expect.stringContaining(english["RESUME_ALREADY_APPLIED.differentAnswer.detail"]!) } },
    });
    expect(answersIn(kernel.received.slice(before), "SendStreamingMessage")).toEqual([]);

    // The same two answers again: only perm-2's is sent, and the task completes.
    before = kernel.received.length;
    const retried = await run([allowDeploy, allowDelete]);
    await expectValidRun(retried.events);
    expect(retried.events.at(-1)?.type).toBe(EventType.RUN_FINISHED);
    // perm-2 alone is a sideband permission (it came in pendingPermissions): SendMessage (contract §5).
    expect(answersIn(kernel.received.slice(before), "SendStreamingMessage")).toEqual([]);
    expect(answersIn(kernel.received.slice(before), "SendMessage")).toEqual(["perm-2"]);
    // The sideband answer plays the task's last turn behind the call's back: it completes.
    await completed(tasks.get(text)!.taskId);
    // The chat shows perm-1's answer once; the sideband turn's text is the task's, not this run's (recovery shows no text).
    expect(transcript(agent.messages)).toEqual([
      { role: "user", content: text },
      { role: "assistant", content: "Two changes to make. " },
      { role: "assistant", content: "Deploying demo-vpc. " },
    ]);

    // Once all was accepted, a different answer to perm-1 is still RESUME_ALREADY_APPLIED.
    const late = await post(resume(first, [denyDeploy, allowDelete]));
    await expectValidRun(late.events);
    expect(late.events.at(-1)).toMatchObject({
      type: EventType.RUN_ERROR,
      code: "RESUME_ALREADY_APPLIED",
      message: english.RESUME_ALREADY_APPLIED,
      metadata: { "iac-code": { detail: expect.stringContaining(english["RESUME_ALREADY_APPLIED.differentAnswer.detail"]!) } },
    });
  });

  it("an input GetTask shows that the thread does not know is announced as a fresh interrupt, and nothing is sent", async () => {
    const text = `one-wait ${uniqueId("t")}`;
    const first = runInput(text);
    const parked = await post(first);
    await expectValidRun(parked.events);
    expect(interruptsOf(parked.events).map((interrupt) => interrupt.id)).toEqual(["perm-1"]);

    // Meanwhile the parked task waits on perm-2 as well, with no status sent.
    const { taskId, contextId } = tasks.get(text)!;
    await kernel.addWaiting(taskId, { pendingPermissions: [{ ...deleteProjection, requestTaskId: taskId, contextId }] });
    let before = kernel.received.length;
    const announced = await post(resume(first, [allowDeploy]));
    await expectValidRun(announced.events);
    expect(announced.events.at(-1)?.type).toBe(EventType.RUN_FINISHED);
    // The fresh one is announced, and perm-1, whose answer was not sent, is still to answer beside it.
    expect(interruptsOf(announced.events).map((interrupt) => interrupt.id)).toEqual(["perm-1", "perm-2"]);
    const sent = kernel.received.slice(before).map((call) => call.method);
    expect(sent).not.toContain("SendStreamingMessage");
    expect(sent).not.toContain("SendMessage");

    // Answering what the thread now waits on goes through.
    before = kernel.received.length;
    const answered = await post(resume(first, [allowDeploy, allowDelete]));
    await expectValidRun(answered.events);
    expect(answered.events.at(-1)?.type).toBe(EventType.RUN_FINISHED);
    expect(interruptsOf(answered.events)).toEqual([]);
    expect(JSON.stringify(answered.events)).toContain("Deleted old-vpc.");
    // perm-1 is not sideband, so neither answer is: both are streamed, in order.
    expect(answersIn(kernel.received.slice(before), "SendStreamingMessage")).toEqual(["perm-1", "perm-2"]);
  });
});
