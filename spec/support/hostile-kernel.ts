/**
 * A kernel that does what a test tells it to, on loopback: a bare node:http
 * server speaking just enough A2A 1.0 JSON-RPC for a run, whose streaming
 * answers are hand-made SSE (or anything else) written by the test. Calls
 * are routed by the user message's text, so a hostile run and a well-behaved
 * one can share it; every request is kept, with its headers and body.
 *
 * Unscripted streams run a well-behaved task: submitted, one text, completed.
 * CancelTask answers the task as canceled, GetTask as completed, ListTasks
 * with no task; `answer` replaces that for one method.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface KernelRequest {
  method: string;
  id: unknown;
  params: Record<string, unknown>;
  headers: http.IncomingHttpHeaders;
  /** The request line's method and path (GET for the pipeline state route). */
  httpMethod: string;
  path: string;
}

export interface StreamContext {
  request: KernelRequest;
  res: http.ServerResponse;
  taskId: string;
  contextId: string;
  /** One SSE `data:` record of a JSON-RPC response with this result. */
  record(result: unknown): string;
  /** The same, with the result given as JSON text (for values JSON.stringify cannot write). */
  rawRecord(resultJson: string): string;
  /** The opening records of a task: submitted, then working. */
  opening(): string;
  /** Answers SSE headers (200, text/event-stream). */
  startSse(): void;
}

export type StreamScript = (context: StreamContext) => void;
/** Answers one request itself; return false to let the default answer it. */
export type Answer = (request: KernelRequest, res: http.ServerResponse) => boolean | void;

export interface HostileKernel {
  url: string;
  requests: KernelRequest[];
  /** Streams whose user text is `text` follow `script`. */
  script(text: string, script: StreamScript): void;
  /** Every request of this JSON-RPC method (or `GET` for the pipeline state route) is answered by `answer`. */
  answer(method: string, answer: Answer): void;
  calls(method: string): KernelRequest[];
  close(): Promise<void>;
}

let tasks = 0;

const rawFrameOf = (id: unknown, resultJson: string) => `data: {"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${resultJson}}\n\n`;

function userText(params: Record<string, unknown>): string {
  const message = params.message as { parts?: Array<{ text?: string }> } | undefined;
  return message?.parts?.map((part) => part.text ?? "").join("") ?? "";
}

export async function startHostileKernel(options: { host?: string } = {}): Promise<HostileKernel> {
  const scripts = new Map<string, StreamScript>();
  const answers = new Map<string, Answer>();
  const requests: KernelRequest[] = [];

  const stream = (request: KernelRequest, res: http.ServerResponse) => {
    const taskId = `hostile-task-${process.pid}-${++tasks}`;
    const message = request.params.message as { contextId?: string } | undefined;
    const contextId = message?.contextId ?? `hostile-context-${tasks}`;
    const rawRecord = (resultJson: string) => rawFrameOf(request.id, resultJson);
    const record = (result: unknown) => rawRecord(JSON.stringify(result));
    const context: StreamContext = {
      request,
      res,
      taskId,
      contextId,
      record,
      rawRecord,
      opening: () =>
        record({ task: { id: taskId, contextId, status: { state: "TASK_STATE_SUBMITTED" } } }) +
        record({ statusUpdate: { taskId, contextId, status: { state: "TASK_STATE_WORKING" } } }),
      startSse: () => res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache" }),
    };
    const script = scripts.get(userText(request.params));
    if (script) return script(context);
    context.startSse();
    const text = { messageId: `${taskId}-m`, role: "ROLE_AGENT", parts: [{ text: "fine" }] };
    res.end(
      context.opening() +
        record({ statusUpdate: { taskId, contextId, status: { state: "TASK_STATE_WORKING", message: text } } }) +
        record({ statusUpdate: { taskId, contextId, status: { state: "TASK_STATE_COMPLETED" } } }),
    );
  };

  const unary = (request: KernelRequest, res: http.ServerResponse) => {
    const id = typeof request.params.id === "string" ? request.params.id : "unknown";
    const json = (result: unknown) => {
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ jsonrpc: "2.0", id: request.id, result }));
    };
    if (request.method === "CancelTask") return json({ id, contextId: "", status: { state: "TASK_STATE_CANCELED" } });
    if (request.method === "GetTask") return json({ id, contextId: "", status: { state: "TASK_STATE_COMPLETED" } });
    if (request.method === "ListTasks") return json({ tasks: [], nextPageToken: "" });
    res.writeHead(404).end();
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      let body: { id?: unknown; method?: string; params?: Record<string, unknown> } = {};
      try {
        body = chunks.length > 0 ? (JSON.parse(Buffer.concat(chunks).toString("utf8")) as typeof body) : {};
      } catch {
        // Not JSON: kept as a request without a method.
      }
      const request: KernelRequest = {
        method: body.method ?? req.method ?? "",
        id: body.id,
        params: body.params ?? {},
        headers: req.headers,
        httpMethod: req.method ?? "",
        path: req.url ?? "",
      };
      requests.push(request);
      const answer = answers.get(request.method);
      if (answer && answer(request, res) !== false) return;
      if (request.method === "SendStreamingMessage" || request.method === "SubscribeToTask") return stream(request, res);
      unary(request, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, options.host ?? "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const host = options.host?.includes(":") ? `[${options.host}]` : (options.host ?? "127.0.0.1");
  return {
    url: `http://${host}:${port}/`,
    requests,
    script: (text, script) => void scripts.set(text, script),
    answer: (method, answer) => void answers.set(method, answer),
    calls: (method) => requests.filter((request) => request.method === method),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
