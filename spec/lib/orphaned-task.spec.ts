/**
 * A service killed mid-run (SIGKILL: no cleanup at all) leaves its thread's
 * file as it was: an execution that is neither paused nor ended, whose A2A
 * task may still run. The process that next serves the thread cancels that
 * task before it starts anything new on the thread.
 */
import { randomUUID } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "@jest/globals";
import { EventType } from "@ag-ui/core";
import { contextIdFor } from "../../lib/a2a/request-mapping.js";
import { loadConfig } from "../../lib/config.js";
import { startReplayKernel, type ReplayKernel } from "../../lib/kernel/replay-kernel.js";
import { startService, type RunningService } from "../../lib/server.js";
import { threadFileStem } from "../../lib/state/file-thread-store.js";
import type { ThreadState } from "../../lib/state/thread-state.js";
import { newThreadState } from "../../lib/threads/thread-transitions.js";
import { expectValidRun } from "../support/agui.js";
import { openRun, parseSse, startServiceProcess, type ServiceProcess } from "../support/service-process.js";
import { postRun, runInput, uniqueId } from "../support/service.js";

/** One JSON-RPC call to the kernel, straight over fetch. */
const kernelCall = (url: string, method: string, params: unknown) =>
  fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", "A2A-Version": "1.0" },
    body: JSON.stringify({ jsonrpc: "2.0", id: randomUUID(), method, params }),
  });

describe("a task left running by a killed service", () => {
  let kernel: ReplayKernel;
  let stateDir: string;
  const services: RunningService[] = [];
  const processes: ServiceProcess[] = [];
  beforeAll(async () => {
    // Real time: `slow-chat` streams for about three seconds, long enough to kill the service in the middle.
    kernel = await startReplayKernel({ timeScale: 1 });
  });
  afterEach(async () => {
    for (const service of services.splice(0)) await service.close();
    for (const running of processes.splice(0)) running.child.kill("SIGKILL");
  });
  afterAll(() => kernel.close());

  const freshService = async () => {
    // Through loadConfig, as the command does: every setting at its default but these.
    const config = loadConfig([], {
      IAC_CODE_AGUI_PORT: "0",
      IAC_CODE_AGUI_A2A_URL: kernel.url,
      IAC_CODE_AGUI_STATE_DIR: stateDir,
      IAC_CODE_AGUI_ALLOWED_CWDS: os.tmpdir(),
    });
    const service = await startService(config);
    services.push(service);
    return service;
  };
  const stateFile = (threadId: string) => path.join(stateDir, "threads", `${threadFileStem(threadId)}.json`);
  const callIndex = (method: string, matches: (params: Record<string, unknown>) => boolean = () => true) =>
    kernel.received.findIndex((received) => received.method === method && matches(received.params as Record<string, unknown>));
  const taskState = async (taskId: string) => {
    const reply = (await (await kernelCall(kernel.url, "GetTask", { id: taskId })).json()) as { result?: { status?: { state?: string } } };
    return reply.result?.status?.state;
  };
  const lastSend = () => kernel.received.map((received) => received.method).lastIndexOf("SendStreamingMessage");

  it("is cancelled by the next message on its thread, before that message reaches the kernel", async () => {
    stateDir = mkdtempSync(path.join(os.tmpdir(), "agui-orphan-"));
    const killed = await startServiceProcess({
      IAC_CODE_AGUI_A2A_URL: kernel.url,
      IAC_CODE_AGUI_STATE_DIR: stateDir,
      IAC_CODE_AGUI_ALLOWED_CWDS: os.tmpdir(),
    });
    processes.push(killed);
    const first = runInput("slow-chat");
    // The session event comes once the task id is on disk; the first text shows the task is under way.
    const open = await openRun(killed.url, first, (raw) => raw.includes("iac-code.session.v1") && raw.includes("TEXT_MESSAGE_CONTENT"));
    killed.child.kill("SIGKILL");
    await killed.exited;
    open.abort();
    const session = (await parseSse(open.raw)).find((event) => event.type === EventType.CUSTOM && event.name === "iac-code.session.v1");
    const { taskId } = (session as { value: { taskId: string } }).value;

    const left = JSON.parse(readFileSync(stateFile(first.threadId), "utf8")) as ThreadState;
    expect(left.execution).toMatchObject({ taskId, pending: {} });
    expect(left.terminalExecutionIds).not.toContain(left.execution.executionId);
    expect(await taskState(taskId)).toBe("TASK_STATE_WORKING");

    const service = await freshService();
    const next = await postRun(service.url, { ...runInput("chat"), threadId: first.threadId, runId: uniqueId("run") });
    await expectValidRun(next.events);
    expect(next.events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });

    const cancelled = callIndex("CancelTask", (params) => params.id === taskId);
    expect(cancelled).toBeGreaterThanOrEqual(0);
    const sent = lastSend();
    expect(cancelled).toBeLessThan(sent);
    expect(await taskState(taskId)).toBe("TASK_STATE_CANCELED");
  });

  it("is cancelled by the next answer too, which then finds nothing to resume", async () => {
    stateDir = mkdtempSync(path.join(os.tmpdir(), "agui-orphan-"));
    const killed = await startServiceProcess({
      IAC_CODE_AGUI_A2A_URL: kernel.url,
      IAC_CODE_AGUI_STATE_DIR: stateDir,
      IAC_CODE_AGUI_ALLOWED_CWDS: os.tmpdir(),
    });
    processes.push(killed);
    const first = runInput("slow-chat");
    const open = await openRun(killed.url, first, (raw) => raw.includes("iac-code.session.v1"));
    killed.child.kill("SIGKILL");
    await killed.exited;
    open.abort();
    const session = (await parseSse(open.raw)).find((event) => event.type === EventType.CUSTOM && event.name === "iac-code.session.v1");
    const { taskId } = (session as { value: { taskId: string } }).value;

    const service = await freshService();
    const answer = { ...first, runId: uniqueId("run"), resume: [{ interruptId: "q-1", status: "resolved", payload: { selectedId: "a" } }] };
    const { events } = await postRun(service.url, answer);
    await expectValidRun(events);
    expect(events.at(-1)).toMatchObject({ type: EventType.RUN_ERROR, code: "EXECUTION_LOST" });
    expect(callIndex("CancelTask", (params) => params.id === taskId)).toBeGreaterThanOrEqual(0);
    expect(await taskState(taskId)).toBe("TASK_STATE_CANCELED");
  });

  it("is found by its context and cancelled when the killed service never learned its task id", async () => {
    stateDir = mkdtempSync(path.join(os.tmpdir(), "agui-orphan-"));
    const first = runInput("slow-chat");
    const contextId = contextIdFor(first.threadId);
    // The kernel has the task; the file, written as admission writes it, does not name it yet.
    const started = await kernelCall(kernel.url, "SendStreamingMessage", {
      message: { messageId: randomUUID(), role: "ROLE_USER", parts: [{ text: "slow-chat" }], contextId },
    });
    const reader = started.body!.getReader();
    let head = "";
    while (!/"task":\{"id":"([^"]+)"/.test(head)) head += new TextDecoder().decode((await reader.read()).value);
    const taskId = /"task":\{"id":"([^"]+)"/.exec(head)![1]!;
    const state = newThreadState({
      threadId: first.threadId,
      contextId,
      cwd: os.tmpdir(),
      userId: null,
      rosInvocationId: "ros-1",
      executionId: "execution-killed",
    });
    mkdirSync(path.dirname(stateFile(first.threadId)), { recursive: true, mode: 0o700 });
    writeFileSync(stateFile(first.threadId), JSON.stringify({ ...state, runDigests: { [first.runId]: "0".repeat(64) } }), { mode: 0o600 });

    const service = await freshService();
    const next = await postRun(service.url, { ...runInput("chat"), threadId: first.threadId, runId: uniqueId("run") });
    await expectValidRun(next.events);
    expect(next.events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });

    const listed = callIndex("ListTasks", (params) => params.contextId === contextId);
    const cancelled = callIndex("CancelTask", (params) => params.id === taskId);
    const sent = lastSend();
    expect(listed).toBeGreaterThanOrEqual(0);
    expect(cancelled).toBeGreaterThan(listed);
    expect(cancelled).toBeLessThan(sent);
    expect(await taskState(taskId)).toBe("TASK_STATE_CANCELED");
    await reader.cancel();
  });
});
