/**
 * The spans of the service's two boundaries: each call to the kernel (a
 * client span named after its A2A method, or the iac-code extension route
 * it calls) and each thread store operation, with the ids each is about.
 * Their arguments are never recorded otherwise: a message's parts are the
 * user's text, and the request's credentials travel in its metadata.
 */
import { SpanKind, type Attributes } from "@opentelemetry/api";
import type { ThreadStore } from "../state/thread-store.js";
import { ID_ATTRIBUTES, idAttributes, isAsyncMember, spansExported, tracedMembers } from "./spans.js";

interface KernelMethod {
  /** The A2A method (JSON-RPC), or the kernel's extension route. */
  name: string;
  stream?: boolean;
  /** The first argument is the task's id. */
  byTaskId?: boolean;
}

const KERNEL_METHODS: Readonly<Record<string, KernelMethod>> = {
  sendStreamingMessage: { name: "SendStreamingMessage", stream: true },
  subscribeToTask: { name: "SubscribeToTask", stream: true, byTaskId: true },
  sendMessage: { name: "SendMessage" },
  getTask: { name: "GetTask", byTaskId: true },
  cancelTask: { name: "CancelTask", byTaskId: true },
  listTasks: { name: "ListTasks" },
  getPipelineState: { name: "iac-code/pipeline/state", byTaskId: true },
  ensureRestored: { name: "iac-code/session/ensure-restored" },
  handoff: { name: "iac-code/handoff" },
};

const field = (value: unknown, key: string): unknown =>
  typeof value === "object" && value !== null ? (value as Record<string, unknown>)[key] : undefined;

const taskAttribute = (taskId: unknown): Attributes | undefined =>
  typeof taskId === "string" && taskId !== "" ? { [ID_ATTRIBUTES.taskId]: taskId } : undefined;

/** The task a stream's item is about: a Task, or an update or message on one. */
function taskOfItem(item: unknown): Attributes | undefined {
  return (
    taskAttribute(field(field(item, "task"), "id")) ??
    taskAttribute(field(field(item, "statusUpdate"), "taskId")) ??
    taskAttribute(field(field(item, "artifactUpdate"), "taskId")) ??
    taskAttribute(field(field(item, "message"), "taskId"))
  );
}

/** The task a call names up front: its first argument, or the task of the message or request it sends. */
function taskOfCall(method: KernelMethod, args: unknown[]): Attributes | undefined {
  if (method.byTaskId) return taskAttribute(args[0]);
  return taskAttribute(field(field(args[0], "message"), "taskId")) ?? taskAttribute(field(args[0], "taskId"));
}

/** Every kernel call in a client span of its own, the active span while it runs: its requests carry it as `traceparent`. */
export function tracedKernel<T extends object>(kernel: T): T {
  if (!spansExported()) return kernel;
  return tracedMembers(kernel, (member, args) => {
    const method = KERNEL_METHODS[member];
    if (method === undefined) return undefined;
    return {
      name: `a2a ${method.name}`,
      kind: SpanKind.CLIENT,
      attributes: { "a2a.method": method.name, ...taskOfCall(method, args) },
      ...(method.stream ? { stream: true, idsOf: taskOfItem } : {}),
    };
  });
}

/** Every store operation (each method the store declares `async`) in a span of its own, with its thread's id. */
export function tracedStore<T extends ThreadStore>(store: T): T {
  if (!spansExported()) return store;
  return tracedMembers(store, (operation, args) => {
    if (!isAsyncMember(store, operation)) return undefined;
    const threadId = typeof args[0] === "string" ? args[0] : field(args[0], "threadId");
    return { name: `state ${operation}`, attributes: { "state.operation": operation, ...idAttributes({ threadId }) } };
  });
}
