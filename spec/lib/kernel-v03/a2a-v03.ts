/**
 * The A2A 0.3 kernel specs talk to it with the SDK's own 0.3 client, as a
 * stock 0.3 caller would; these are the few helpers they share.
 */
import { randomUUID } from "node:crypto";
import { afterEach } from "@jest/globals";
import type { Message, Task } from "a2a-sdk-v03";
import { A2AClient } from "a2a-sdk-v03/client";
import { startReplayKernelV03, type ReplayKernelV03, type ReplayKernelV03Options } from "../../../lib/kernel-v03/replay-kernel.js";

export type StreamEvent = Awaited<ReturnType<ReturnType<A2AClient["sendMessageStream"]>["next"]>>["value"] & object;

/** Starts kernels (instant replay unless told otherwise) that are closed after each test. */
export function kernelsClosedAfterEach(): (options?: ReplayKernelV03Options) => Promise<{ kernel: ReplayKernelV03; client: A2AClient }> {
  const started: ReplayKernelV03[] = [];
  afterEach(async () => {
    await Promise.all(started.splice(0).map((kernel) => kernel.close()));
  });
  return async (options = {}) => {
    const kernel = await startReplayKernelV03({ timeScale: 0, ...options });
    started.push(kernel);
    return { kernel, client: await A2AClient.fromCardUrl(new URL(".well-known/agent-card.json", kernel.url).href) };
  };
}

export function userMessage(text: string, extra: Partial<Message> = {}): { message: Message } {
  return { message: { kind: "message", messageId: randomUUID(), role: "user", parts: [{ kind: "text", text }], ...extra } };
}

/** Every event of a stream, and the error that broke it, if one did. */
export async function collect(events: AsyncGenerator<StreamEvent>): Promise<{ events: StreamEvent[]; error?: unknown }> {
  const seen: StreamEvent[] = [];
  try {
    for await (const event of events) seen.push(event);
  } catch (error) {
    return { events: seen, error };
  }
  return { events: seen };
}

/** The events as the fixture recorded them: without the times the kernel stamps and the history the SDK keeps. */
export function untimed(events: readonly StreamEvent[]): unknown[] {
  return events.map((event) => {
    if (event.kind !== "task" && event.kind !== "status-update") return event;
    const { timestamp: _time, ...status } = event.status;
    if (event.kind === "status-update") return { ...event, status };
    const { history: _history, ...task } = event;
    return { ...task, status };
  });
}

export const taskIdOf = (events: readonly StreamEvent[]): string => {
  const first = events[0];
  if (first?.kind !== "task") throw new Error(`the stream did not open with a task: ${JSON.stringify(first)}`);
  return first.id;
};

export async function getTask(client: A2AClient, id: string, historyLength?: number): Promise<Task> {
  const reply = await client.getTask(historyLength === undefined ? { id } : { id, historyLength });
  if ("error" in reply) throw new Error(`tasks/get: ${JSON.stringify(reply.error)}`);
  return reply.result;
}

/** The text of a task's text artifacts, chunks in order. */
export const artifactText = (task: Task): string =>
  (task.artifacts ?? []).flatMap((artifact) => artifact.parts.map((part) => (part.kind === "text" ? part.text : ""))).join("");

/** A promise and its resolver, for holding a kernel's line until a test has acted. */
export function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}
