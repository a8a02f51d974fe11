/** A bare A2A 1.0 JSON-RPC client over fetch, so the kernel specs test the wire, not a client library. */
import { randomUUID } from "node:crypto";
import { setImmediate as tick } from "node:timers/promises";
import { afterEach } from "@jest/globals";
import { startReplayKernel, type ReplayKernel, type ReplayKernelOptions } from "../../../lib/kernel/replay-kernel.js";
import type { JsonRpcReply, RpcResults, WireStreamResponse, WireTask } from "./a2a-wire.js";

export interface SseRecord {
  event: string;
  /** A JSON-RPC reply: a frame on `message` records, an error on `error` ones. */
  data: JsonRpcReply<WireStreamResponse>;
}

export function call(url: string, method: keyof RpcResults, params: unknown, headers: Record<string, string> = {}) {
  return fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", "A2A-Version": "1.0", ...headers },
    body: JSON.stringify({ jsonrpc: "2.0", id: randomUUID(), method, params }),
  });
}

export async function rpc<Method extends keyof RpcResults>(
  url: string,
  method: Method,
  params: unknown,
  headers?: Record<string, string>,
): Promise<JsonRpcReply<RpcResults[Method]>> {
  return (await (await call(url, method, params, headers)).json()) as JsonRpcReply<RpcResults[Method]>;
}

export function userMessage(text: string, extra: Record<string, unknown> = {}) {
  return { message: { messageId: randomUUID(), role: "ROLE_USER", parts: [{ text }], ...extra } };
}

/** SSE records as they arrive; `event` is "message" unless the record names one. */
export async function* sseRecords(response: Response): AsyncGenerator<SseRecord> {
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of response.body! as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let end: number;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event = "message";
      const data: string[] = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) event = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).trimStart());
      }
      if (data.length > 0) yield { event, data: JSON.parse(data.join("\n")) as SseRecord["data"] };
    }
  }
}

export async function stream(url: string, method: keyof RpcResults, params: unknown, headers?: Record<string, string>) {
  const records: SseRecord[] = [];
  for await (const record of sseRecords(await call(url, method, params, headers))) records.push(record);
  return records;
}

/** The StreamResponse payloads (`{statusUpdate: …}`) of a stream's data records. */
export const results = (records: SseRecord[]) => records.filter((r) => r.event === "message").map((r) => r.data.result!);

export const stateOf = (result: WireStreamResponse | undefined): string | undefined =>
  (result?.task ?? result?.statusUpdate)?.status?.state;

/**
 * A starter for replay kernels (instant replay unless told otherwise) that
 * closes every kernel a test started once the test is over. Call it at the
 * top of a spec file.
 */
export function kernelsClosedAfterEach(): (options?: ReplayKernelOptions) => Promise<ReplayKernel> {
  const kernels: ReplayKernel[] = [];
  afterEach(async () => {
    await Promise.all(kernels.splice(0).map((started) => started.close()));
  });
  return async (options = {}) => {
    const started = await startReplayKernel({ timeScale: 0, ...options });
    kernels.push(started);
    return started;
  };
}

export async function getTask(k: ReplayKernel, id: string): Promise<WireTask> {
  const reply = await rpc(k.url, "GetTask", { id, historyLength: 100 });
  if (reply.result === undefined) throw new Error(`GetTask ${id} answered ${JSON.stringify(reply.error)}`);
  return reply.result;
}

/** Polls GetTask until the task reaches `state` (each poll yields to the event loop; no timed sleep). */
export async function waitForState(k: ReplayKernel, id: string, state: string) {
  for (;;) {
    const task = await getTask(k, id);
    if (task.status.state === state) return task;
    await tick();
  }
}
