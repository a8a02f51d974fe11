/**
 * The bench's kernel: a bare A2A 1.0 JSON-RPC server over node:http that
 * streams exactly what the user message's text asks for, as fast as its
 * socket takes it or paced, and stamps each text delta with the time it was
 * written (`wallClockMs`, comparable across processes on one machine). It
 * is deliberately cheaper than the `@a2a-js/sdk` demo kernel, so the bench
 * measures the service, not the kernel.
 *
 * The user text is JSON: `{"events": N, "intervalMs": M, "idle": true}`.
 *   events     text deltas to send after the task and its session (0 with idle)
 *   intervalMs 0: back to back, honouring backpressure; else one every M ms
 *   idle       after the opening frames, send nothing until the client leaves
 * Then `TASK_STATE_COMPLETED`, and the stream ends.
 *
 * Run as a child (`fork`): announces `{type: "ready", url}`; answers
 * `{type: "stats"}` with its CPU and memory.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { processStats, wallClockMs } from "./support.js";

export interface StreamScript {
  events?: number;
  intervalMs?: number;
  idle?: boolean;
  /** Bytes of padding after each stamp, to make frames the size of real ones. */
  padding?: number;
}

interface RpcRequest {
  id: unknown;
  method: string;
  params?: { id?: string; message?: { contextId?: string; parts?: Array<{ text?: string }> } };
}

let tasks = 0;

function frame(id: unknown, result: unknown): string {
  return `data: ${JSON.stringify({ jsonrpc: "2.0", id, result })}\n\n`;
}

function stream(request: RpcRequest, res: http.ServerResponse): void {
  const taskId = `bench-task-${process.pid}-${++tasks}`;
  const contextId = request.params?.message?.contextId ?? `bench-context-${tasks}`;
  let script: StreamScript;
  try {
    script = JSON.parse(request.params?.message?.parts?.map((part) => part.text ?? "").join("") ?? "{}") as StreamScript;
  } catch {
    script = {};
  }
  const status = (state: string, text?: string, metadata?: unknown) =>
    frame(request.id, {
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
  res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache", Connection: "keep-alive" });
  res.write(frame(request.id, { task: { id: taskId, contextId, status: { state: "TASK_STATE_SUBMITTED" } } }));
  res.write(status("TASK_STATE_WORKING", undefined, { iac_code: { iacCodeSessionId: `session-${taskId}` } }));
  const padding = "x".repeat(script.padding ?? 0);
  const delta = () => status("TASK_STATE_WORKING", `${wallClockMs().toFixed(3)}|${padding}`);
  let closed = false;
  res.on("close", () => (closed = true));
  const finish = () => {
    if (!closed) res.end(status("TASK_STATE_COMPLETED"));
  };
  if (script.idle) {
    res.write(status("TASK_STATE_WORKING", "idle"));
    return;
  }
  const total = script.events ?? 0;
  let sent = 0;
  if (script.intervalMs) {
    const timer = setInterval(() => {
      if (closed || sent >= total) {
        clearInterval(timer);
        return finish();
      }
      res.write(delta());
      sent++;
    }, script.intervalMs);
    return;
  }
  const pump = () => {
    while (!closed && sent < total) {
      sent++;
      if (!res.write(delta())) return void res.once("drain", pump);
    }
    finish();
  };
  pump();
}

export async function startScriptedKernel(port = 0): Promise<{ url: string; server: http.Server; cancels: () => number }> {
  let cancels = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      let request: RpcRequest;
      try {
        request = JSON.parse(Buffer.concat(chunks).toString("utf8")) as RpcRequest;
      } catch {
        res.writeHead(400).end();
        return;
      }
      if (request.method === "SendStreamingMessage") return stream(request, res);
      const taskId = request.params?.id ?? "unknown";
      if (request.method === "CancelTask") cancels++;
      const state = request.method === "CancelTask" ? "TASK_STATE_CANCELED" : "TASK_STATE_COMPLETED";
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ jsonrpc: "2.0", id: request.id, result: { id: taskId, contextId: "", status: { state } } }));
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
