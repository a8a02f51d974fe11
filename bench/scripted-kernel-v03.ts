/**
 * The bench's A2A 0.3 kernel, the twin of `scripted-kernel.ts` for the peer
 * comparison (`peer.ts`): bare node:http, the same script language
 * (`{"events", "intervalMs", "idle", "padding"}` as the user text), the
 * same send stamps. Each text delta is a `working` status-update whose
 * message (one messageId per task) carries `<send time ms>|<padding>`: the
 * one shape both bridges turn into a text delta, so neither is measured on
 * a path the other lacks. Its card says protocolVersion 0.3.0, so the
 * service reads it as a 0.3 agent, and `@ag-ui/a2a`'s 0.2 client can call it.
 *
 * Methods: message/stream, message/send (the finished task), tasks/get,
 * tasks/cancel. Run as a child (`fork`): announces `{type: "ready", url}`;
 * answers `{type: "stats"}` with its CPU and memory.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { StreamScript } from "./scripted-kernel.js";
import { onRpcRequest, sendDeltas } from "./kernel-wire.js";
import { processStats, wallClockMs } from "./support.js";

interface RpcRequest {
  id: unknown;
  method: string;
  params?: { id?: string; message?: { contextId?: string; parts?: Array<{ text?: string }> } };
}

let tasks = 0;
const frame = (id: unknown, result: unknown) => `data: ${JSON.stringify({ jsonrpc: "2.0", id, result })}\n\n`;
const EVENT_STREAM = { "Content-Type": "text/event-stream", "Cache-Control": "no-cache", Connection: "keep-alive" };

function scriptOf(request: RpcRequest): StreamScript {
  try {
    return JSON.parse(request.params?.message?.parts?.map((part) => part.text ?? "").join("") || "{}") as StreamScript;
  } catch {
    return {};
  }
}

function stream(request: RpcRequest, res: http.ServerResponse): void {
  const taskId = `v03-task-${process.pid}-${++tasks}`;
  const contextId = request.params?.message?.contextId ?? `v03-context-${tasks}`;
  const script = scriptOf(request);
  const status = (state: string, text?: string, final = false) =>
    frame(request.id, {
      kind: "status-update",
      taskId,
      contextId,
      status: {
        state,
        ...(text === undefined
          ? {}
          : {
              message: {
                kind: "message",
                messageId: `${taskId}-message`,
                role: "agent",
                parts: [{ kind: "text", text }],
                taskId,
                contextId,
              },
            }),
      },
      final,
    });
  res.writeHead(200, EVENT_STREAM);
  res.write(frame(request.id, { kind: "task", id: taskId, contextId, status: { state: "submitted" } }));
  res.write(status("working"));
  const padding = "x".repeat(script.padding ?? 0);
  const delta = () => status("working", `${wallClockMs().toFixed(3)}|${padding}`);
  let closed = false;
  res.on("close", () => (closed = true));
  const finish = () => void (closed || res.end(status("completed", undefined, true)));
  if (script.idle) {
    res.write(status("working", "idle"));
    return;
  }
  sendDeltas(res, script, { delta, finish, closed: () => closed });
}

export async function startScriptedKernelV03(port = 0): Promise<{ url: string; server: http.Server }> {
  let url = "";
  const card = () => ({
    name: "bench-v03",
    description: "A scripted A2A 0.3 agent for the bridge comparison",
    url,
    version: "1.0.0",
    protocolVersion: "0.3.0",
    preferredTransport: "JSONRPC",
    capabilities: { streaming: true, pushNotifications: false },
    defaultInputModes: ["text/plain"],
    defaultOutputModes: ["text/plain"],
    skills: [],
  });
  const server = http.createServer((req, res) => {
    if (req.method === "GET" && (req.url === "/.well-known/agent.json" || req.url === "/.well-known/agent-card.json")) {
      res.writeHead(200, { "Content-Type": "application/json" });
      return void res.end(JSON.stringify(card()));
    }
    onRpcRequest<RpcRequest>(req, res, (request) => {
      if (request.method === "message/stream") return stream(request, res);
      const taskId = request.method === "message/send" ? `v03-task-${process.pid}-${++tasks}` : (request.params?.id ?? "unknown");
      const state = request.method === "tasks/cancel" ? "canceled" : "completed";
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ jsonrpc: "2.0", id: request.id, result: { kind: "task", id: taskId, contextId: "", status: { state } } }));
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return { url, server };
}

if (process.send) {
  const kernel = await startScriptedKernelV03();
  process.on("SIGTERM", () => process.exit(0));
  process.on("message", (message: { type: string; gc?: boolean }) => {
    if (message.type === "stats") process.send!({ type: "stats", ...processStats(message.gc ?? false) });
  });
  process.send({ type: "ready", url: kernel.url });
}
