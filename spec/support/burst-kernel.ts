/**
 * A kernel as fast as its socket: a bare node:http A2A 1.0 server whose
 * streams write back to back, honouring backpressure (a write the socket
 * refuses waits for `drain`), so that a service which stops reading holds
 * it back through TCP and the test can see it held.
 *
 * The user text is JSON (`BurstScript`): a tool call with a result of
 * `toolResultBytes`, then `deltas` text deltas of `deltaBytes` each (every
 * one starts with its number, so a test can check order and loss), then
 * COMPLETED — or, with `hold`, nothing more until the task is cancelled.
 * With `answerWhenReleased` the stream's headers wait for `release()`.
 *
 * Every task is kept with its state: `ListTasks` answers the running ones
 * of a context (a run that never learned its task cancels by context), and
 * `CancelTask` ends the task's open stream with CANCELED.
 *
 * Its handoff route `apply-input` always answers that the input must come
 * through AG-UI, so the service delivers it as a run of its own.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface BurstScript {
  deltas?: number;
  deltaBytes?: number;
  toolResultBytes?: number;
  hold?: boolean;
  answerWhenReleased?: boolean;
}

export interface BurstTask {
  id: string;
  contextId: string;
  state: string;
  /** Deltas written so far (the socket may not have sent them yet). */
  sent: number;
  /** True while the stream waits for `drain`: its socket is full and TCP holds it back. */
  waitingForDrain: boolean;
  /** How often the stream had to wait for `drain`. */
  waits: number;
  streamEnded: boolean;
}

export interface BurstKernel {
  url: string;
  methods: string[];
  tasks: BurstTask[];
  cancelled: string[];
  /** Lets the streams held by `answerWhenReleased` answer. */
  release(): void;
  close(): Promise<void>;
}

interface RpcRequest {
  id?: unknown;
  method?: string;
  params?: { id?: string; contextId?: string; message?: { contextId?: string; parts?: Array<{ text?: string }> } };
}

export const deltaText = (index: number, bytes: number) => `${index}|`.padEnd(bytes, "x");

const frame = (id: unknown, result: unknown) => `data: ${JSON.stringify({ jsonrpc: "2.0", id, result })}\n\n`;

let counter = 0;

export async function startBurstKernel(): Promise<BurstKernel> {
  const methods: string[] = [];
  const tasks: BurstTask[] = [];
  const cancelled: string[] = [];
  const open = new Map<string, () => void>();
  let released = false;
  const waitingForRelease: Array<() => void> = [];

  const stream = (request: RpcRequest, res: http.ServerResponse) => {
    let script: BurstScript = {};
    try {
      script = JSON.parse(request.params?.message?.parts?.map((part) => part.text ?? "").join("") ?? "{}") as BurstScript;
    } catch {
      // Not a script: an empty run.
    }
    const task: BurstTask = {
      id: `burst-task-${process.pid}-${++counter}`,
      contextId: request.params?.message?.contextId ?? `burst-context-${counter}`,
      state: "TASK_STATE_SUBMITTED",
      sent: 0,
      waitingForDrain: false,
      waits: 0,
      streamEnded: false,
    };
    tasks.push(task);
    const status = (state: string, extra: { text?: string; iacCode?: unknown } = {}) =>
      frame(request.id, {
        statusUpdate: {
          taskId: task.id,
          contextId: task.contextId,
          status: {
            state,
            ...(extra.text === undefined
              ? {}
              : { message: { messageId: `${task.id}-message`, role: "ROLE_AGENT", parts: [{ text: extra.text }] } }),
          },
          ...(extra.iacCode === undefined ? {} : { metadata: { iac_code: extra.iacCode } }),
        },
      });
    let closed = false;
    res.on("close", () => {
      closed = true;
      open.delete(task.id);
    });
    const end = (state: string) => {
      if (closed || task.streamEnded) return;
      task.streamEnded = true;
      open.delete(task.id);
      res.end(status(state));
    };
    open.set(task.id, () => end("TASK_STATE_CANCELED"));

    const start = () => {
      if (closed) return;
      res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache" });
      task.state = "TASK_STATE_WORKING";
      const toolCall = "toolu_burst";
      const opening = [
        frame(request.id, { task: { id: task.id, contextId: task.contextId, status: { state: "TASK_STATE_SUBMITTED" } } }),
        status("TASK_STATE_WORKING", { iacCode: { iacCodeSessionId: `session-${task.id}` } }),
        ...(script.toolResultBytes === undefined
          ? []
          : [
              status("TASK_STATE_WORKING", { iacCode: { tool: { status: "started", toolUseId: toolCall, name: "read_file" } } }),
              status("TASK_STATE_WORKING", {
                iacCode: {
                  tool: { status: "completed", toolUseId: toolCall, name: "read_file", result: "r".repeat(script.toolResultBytes) },
                },
              }),
            ]),
      ];
      // In one write, so the records after a large tool result reach the service in the same read as its end.
      const frames = [opening.join("")].values();
      const total = script.deltas ?? 0;
      const next = () => {
        const opened = frames.next();
        if (!opened.done) return opened.value;
        if (task.sent >= total) return undefined;
        return status("TASK_STATE_WORKING", { text: deltaText(task.sent++, script.deltaBytes ?? 16) });
      };
      const pump = () => {
        task.waitingForDrain = false;
        for (let record = next(); record !== undefined && !closed; record = next()) {
          if (!res.write(record)) {
            task.waitingForDrain = true;
            task.waits++;
            return void res.once("drain", pump);
          }
        }
        if (closed || script.hold) return;
        task.state = "TASK_STATE_COMPLETED";
        end("TASK_STATE_COMPLETED");
      };
      pump();
    };
    if (script.answerWhenReleased && !released) waitingForRelease.push(start);
    else start();
  };

  const unary = (request: RpcRequest, res: http.ServerResponse) => {
    const answer = (result: unknown) => {
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ jsonrpc: "2.0", id: request.id, result }));
    };
    const task = tasks.find((known) => known.id === request.params?.id);
    const shape = (known: BurstTask) => ({ id: known.id, contextId: known.contextId, status: { state: known.state } });
    switch (request.method) {
      case "CancelTask":
        if (task) {
          cancelled.push(task.id);
          task.state = "TASK_STATE_CANCELED";
          open.get(task.id)?.();
        }
        return answer(task ? shape(task) : { id: request.params?.id, contextId: "", status: { state: "TASK_STATE_CANCELED" } });
      case "GetTask":
        return answer(task ? shape(task) : { id: request.params?.id, contextId: "", status: { state: "TASK_STATE_COMPLETED" } });
      case "ListTasks":
        return answer({
          tasks: tasks.filter((known) => known.contextId === request.params?.contextId).map(shape),
          nextPageToken: "",
        });
      default:
        res.writeHead(404).end();
    }
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      let request: RpcRequest = {};
      try {
        request = JSON.parse(Buffer.concat(chunks).toString("utf8")) as RpcRequest;
      } catch {
        // Not JSON: answered as an unknown method.
      }
      if (req.url?.endsWith("/iac-code/handoff/apply-input")) {
        methods.push("handoff/apply-input");
        res.writeHead(200, { "Content-Type": "application/json" });
        return void res.end(JSON.stringify({ status: "NOT_READY", reason: "agui_input_delivery_required" }));
      }
      methods.push(request.method ?? "");
      if (request.method === "SendStreamingMessage") return stream(request, res);
      unary(request, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    methods,
    tasks,
    cancelled,
    release: () => {
      released = true;
      for (const start of waitingForRelease.splice(0)) start();
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
