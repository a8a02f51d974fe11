/**
 * A kernel frame must be a JSON-RPC 2.0 response to the request it answers
 * (issue 24, item 10): one that answers another request's id, says another
 * `jsonrpc` version, or has no envelope at all ends the run with
 * `A2A_PROTOCOL_ERROR`, and its text never reaches the chat, in both
 * dialects.
 */
import type http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { EventType } from "@ag-ui/core";
import { loadConfig, type Config } from "../../lib/config.js";
import { startService, type RunningService } from "../../lib/server.js";
import { expectValidRun } from "../support/agui.js";
import { startHostileKernel, type HostileKernel, type KernelRequest } from "../support/hostile-kernel.js";
import { postRun, runInput, testConfig, waitFor } from "../support/service.js";

const serviceConfig = (overrides: Partial<Config>): Config => ({ ...loadConfig([], {}), ...testConfig(overrides) });
const SMUGGLED = "text from a frame that answers nobody";

/** How a frame is wrapped, given the request's id and the frame's result. */
const ENVELOPES: Record<string, (id: unknown, result: unknown) => unknown> = {
  "another request's id": (_id, result) => ({ jsonrpc: "2.0", id: "another-request", result }),
  '"jsonrpc": "1.0"': (id, result) => ({ jsonrpc: "1.0", id, result }),
  "no jsonrpc member": (id, result) => ({ id, result }),
  "a result alone, neither jsonrpc nor id": (_id, result) => ({ result }),
  "no envelope": (_id, result) => result,
};

const sse = (res: http.ServerResponse, frames: unknown[]) => {
  res.writeHead(200, { "Content-Type": "text/event-stream" });
  res.end(frames.map((frame) => `data: ${JSON.stringify(frame)}\n\n`).join(""));
};

describe.each([
  {
    dialect: "1.0" as const,
    method: "SendStreamingMessage",
    opening: (taskId: string, contextId: string) => ({ task: { id: taskId, contextId, status: { state: "TASK_STATE_SUBMITTED" } } }),
    text: (taskId: string, contextId: string) => ({
      statusUpdate: {
        taskId,
        contextId,
        status: { state: "TASK_STATE_WORKING", message: { messageId: "m1", role: "ROLE_AGENT", parts: [{ text: SMUGGLED }] } },
      },
    }),
  },
  {
    dialect: "0.3" as const,
    method: "message/stream",
    opening: (taskId: string, contextId: string) => ({ kind: "task", id: taskId, contextId, status: { state: "submitted" } }),
    text: (taskId: string, contextId: string) => ({
      kind: "status-update",
      taskId,
      contextId,
      final: false,
      status: {
        state: "working",
        message: { kind: "message", messageId: "m1", role: "agent", parts: [{ kind: "text", text: SMUGGLED }] },
      },
    }),
  },
])("a kernel frame outside its JSON-RPC envelope (A2A $dialect)", ({ dialect, method, opening, text }) => {
  let kernel: HostileKernel;
  let service: RunningService;
  let envelope = ENVELOPES["no envelope"]!;
  const streams: string[] = [];

  beforeAll(async () => {
    kernel = await startHostileKernel();
    let tasks = 0;
    kernel.answer(method, (request: KernelRequest, res) => {
      const taskId = `envelope-task-${++tasks}`;
      streams.push(taskId);
      const message = request.params.message as { contextId?: string } | undefined;
      const contextId = message?.contextId ?? "envelope-context";
      // The task frame is well formed, so the run knows its task; the text frame is not.
      sse(res, [{ jsonrpc: "2.0", id: request.id, result: opening(taskId, contextId) }, envelope(request.id, text(taskId, contextId))]);
    });
    service = await startService(serviceConfig({ a2aUrl: kernel.url, a2aDialect: dialect }));
  });
  afterAll(async () => {
    await service.close();
    await kernel.close();
  });

  it.each(Object.keys(ENVELOPES))("%s: the run ends with A2A_PROTOCOL_ERROR, its text unshown, its task cancelled", async (name) => {
    envelope = ENVELOPES[name]!;
    const result = await postRun(service.url, runInput("hello"));
    await expectValidRun(result.events);
    expect(result.events.at(-1)).toMatchObject({ type: EventType.RUN_ERROR, code: "A2A_PROTOCOL_ERROR" });
    expect(JSON.stringify(result.events)).not.toContain(SMUGGLED);
    const taskId = streams.at(-1)!;
    const cancel = dialect === "1.0" ? "CancelTask" : "tasks/cancel";
    await waitFor(() => kernel.calls(cancel).some((call) => call.params.id === taskId));
  });
});
