/**
 * The bench's kernel: a bare A2A 1.0 JSON-RPC server over node:http that
 * streams exactly what the user message's text asks for, as fast as its
 * socket takes it or paced, and stamps each text delta with the time it was
 * written (`wallClockMs`, comparable across processes on one machine). It
 * is deliberately cheaper than the `@a2a-js/sdk` demo kernel, so the bench
 * measures the service, not the kernel.
 *
 * The user text is JSON: `{"events": N, "intervalMs": M, "idle": true, "park": true}`.
 *   events     text deltas to send after the task and its session (0 with idle)
 *   intervalMs 0: back to back, honouring backpressure; else one every M ms
 *   idle       after the opening frames, send nothing until the client leaves
 *   park       end on a permission the client must answer, not completed
 *   toolResultBytes  first a tool call whose result is a string this long
 * Then `TASK_STATE_COMPLETED` (or, parked, `TASK_STATE_INPUT_REQUIRED`),
 * and the stream ends.
 *
 * The answer to a parked task (a message naming it) is its resume: a Task
 * snapshot, then one text delta that repeats everything the task said
 * before and adds `RESUMED_SUFFIX` (as a kernel repeats its text after a
 * resume, contract §6), then `TASK_STATE_COMPLETED`.
 *
 * Run as a child (`fork`): announces `{type: "ready", url}`; answers
 * `{type: "stats"}` with its CPU and memory.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { onRpcRequest, sendDeltas } from "./kernel-wire.js";
import { processStats, wallClockMs } from "./support.js";

export interface StreamScript {
  events?: number;
  intervalMs?: number;
  idle?: boolean;
  /** End on a permission instead of completing; the task's answer resumes it (see `resume`). */
  park?: boolean;
  /** Before the deltas, one tool call whose result is a string of this many bytes (one large record). */
  toolResultBytes?: number;
  /** Bytes of padding after each stamp, to make frames the size of real ones. */
  padding?: number;
}

interface RpcRequest {
  id: unknown;
  method: string;
  params?: { id?: string; message?: { taskId?: string; contextId?: string; parts?: Array<{ text?: string }> } };
}

let tasks = 0;

/** What a resumed task adds after repeating its earlier text. */
export const RESUMED_SUFFIX = " And now the rest.";

/** The permission a parked task waits on (contract §5). */
export const BENCH_PERMISSION = "bench-permission";

/** Parked tasks, until answered: their context and all the text they sent. */
const parked = new Map<string, { contextId: string; text: string }>();

function frame(id: unknown, result: unknown): string {
  return `data: ${JSON.stringify({ jsonrpc: "2.0", id, result })}\n\n`;
}

const statusFrame = (id: unknown, taskId: string, contextId: string, state: string, text?: string, metadata?: unknown) =>
  frame(id, {
    statusUpdate: {
      taskId,
      contextId,
      status: {
        state,
        ...(text === undefined ? {} : { message: { messageId: `${taskId}-message`, role: "ROLE_AGENT", parts: [{ text }] } }),
      },
      ...(metadata ? { metadata } : {}),
    },
  });

const EVENT_STREAM = { "Content-Type": "text/event-stream", "Cache-Control": "no-cache", Connection: "keep-alive" };

/** The answer to a parked task: its earlier text again, then the new, in one delta. */
function resume(request: RpcRequest, taskId: string, res: http.ServerResponse): void {
  const { contextId, text } = parked.get(taskId)!;
  parked.delete(taskId);
  res.writeHead(200, EVENT_STREAM);
  res.write(frame(request.id, { task: { id: taskId, contextId, status: { state: "TASK_STATE_WORKING" } } }));
  res.write(statusFrame(request.id, taskId, contextId, "TASK_STATE_WORKING", text + RESUMED_SUFFIX));
  res.end(statusFrame(request.id, taskId, contextId, "TASK_STATE_COMPLETED"));
}

function stream(request: RpcRequest, res: http.ServerResponse): void {
  const answered = request.params?.message?.taskId;
  if (answered !== undefined && parked.has(answered)) return resume(request, answered, res);
  const taskId = `bench-task-${process.pid}-${++tasks}`;
  const contextId = request.params?.message?.contextId ?? `bench-context-${tasks}`;
  let script: StreamScript;
  try {
    script = JSON.parse(request.params?.message?.parts?.map((part) => part.text ?? "").join("") ?? "{}") as StreamScript;
  } catch {
    script = {};
  }
  const status = (state: string, text?: string, metadata?: unknown) => statusFrame(request.id, taskId, contextId, state, text, metadata);
  res.writeHead(200, EVENT_STREAM);
  res.write(frame(request.id, { task: { id: taskId, contextId, status: { state: "TASK_STATE_SUBMITTED" } } }));
  res.write(status("TASK_STATE_WORKING", undefined, { iac_code: { iacCodeSessionId: `session-${taskId}` } }));
  const padding = "x".repeat(script.padding ?? 0);
  // Only a task that will be resumed keeps what it said.
  let said = "";
  const delta = () => {
    const text = `${wallClockMs().toFixed(3)}|${padding}`;
    if (script.park) said += text;
    return status("TASK_STATE_WORKING", text);
  };
  let closed = false;
  res.on("close", () => (closed = true));
  const finish = () => {
    if (closed) return;
    if (!script.park) return void res.end(status("TASK_STATE_COMPLETED"));
    parked.set(taskId, { contextId, text: said });
    const input = {
      schemaVersion: 1,
      kind: "permission",
      requestTaskId: taskId,
      contextId,
      inputId: BENCH_PERMISSION,
      toolUseId: "bench-tool",
      toolName: "bench_tool",
      prompt: "Go on?",
      required: true,
    };
    res.end(status("TASK_STATE_INPUT_REQUIRED", undefined, { iac_code: { input } }));
  };
  if (script.toolResultBytes !== undefined) {
    const tool = { toolUseId: "bench-read", name: "read_file" };
    res.write(status("TASK_STATE_WORKING", undefined, { iac_code: { tool: { status: "started", ...tool } } }));
    const result = "r".repeat(script.toolResultBytes);
    res.write(status("TASK_STATE_WORKING", undefined, { iac_code: { tool: { status: "completed", ...tool, result } } }));
  }
  if (script.idle) {
    res.write(status("TASK_STATE_WORKING", "idle"));
    return;
  }
  sendDeltas(res, script, { delta, finish, closed: () => closed });
}

export async function startScriptedKernel(port = 0): Promise<{ url: string; server: http.Server; cancels: () => number }> {
  let cancels = 0;
  const server = http.createServer((req, res) => {
    onRpcRequest<RpcRequest>(req, res, (request) => {
      if (request.method === "SendStreamingMessage") return stream(request, res);
      const taskId = request.params?.id ?? "unknown";
      if (request.method === "CancelTask") cancels++;
      const waiting = parked.get(taskId);
      const state =
        request.method === "CancelTask" ? "TASK_STATE_CANCELED" : waiting ? "TASK_STATE_INPUT_REQUIRED" : "TASK_STATE_COMPLETED";
      if (request.method === "CancelTask") parked.delete(taskId);
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(
        JSON.stringify({ jsonrpc: "2.0", id: request.id, result: { id: taskId, contextId: waiting?.contextId ?? "", status: { state } } }),
      );
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  const { port: bound } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${bound}/`, server, cancels: () => cancels };
}

if (process.send) {
  const kernel = await startScriptedKernel();
  // A normal exit, so --cpu-prof can write its profile.
  process.on("SIGTERM", () => process.exit(0));
  process.on("message", (message: { type: string; gc?: boolean }) => {
    if (message.type === "stats") process.send!({ type: "stats", ...processStats(message.gc ?? false), cancels: kernel.cancels() });
  });
  process.send({ type: "ready", url: kernel.url });
}
