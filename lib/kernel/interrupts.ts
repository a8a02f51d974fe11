/**
 * Interrupts in the demo kernel (wire contract §5): what each task is
 * waiting for, and the strict check a permission answer must pass, as in the
 * real kernel, so the adapter's tests prove wire compatibility.
 *
 * A task waits on what its statuses announced in `metadata.iac_code`: the
 * last `input` projection with `required: true`, and the last
 * `pendingPermissions` list. An answer turn consumes them; a terminal state
 * forgets them. `WaitingTaskStore` writes exactly that into the stored
 * task's `metadata.iac_code`, so GetTask (and the Task frame a resumed
 * stream starts with) shows what is still pending and nothing stale.
 */
import { Role, TaskState, type ListTasksRequest, type Message, type Part, type Task } from "@a2a-js/sdk";
import type { ServerCallContext, TaskStore } from "@a2a-js/sdk/server";
import { isJsonObject } from "../model/json.js";

export type Projection = Record<string, unknown>;

/** The keys of a permission answer's data part, all required, no others. */
export const PERMISSION_ANSWER_KEYS = ["schemaVersion", "kind", "requestTaskId", "inputId", "toolUseId", "decision"] as const;
export const PERMISSION_DECISIONS = ["allow_once", "deny"] as const;

export interface PermissionAnswer {
  schemaVersion: 1;
  kind: "permission";
  requestTaskId: string;
  inputId: string;
  toolUseId: string;
  decision: (typeof PERMISSION_DECISIONS)[number];
}

interface Waiting {
  input?: Projection;
  permissions: Projection[];
}

const TERMINAL_STATES: readonly TaskState[] = [
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
];
export const isTerminal = (state: TaskState | undefined) => state !== undefined && TERMINAL_STATES.includes(state);

const isRequired = (value: unknown): value is Projection => isJsonObject(value) && value.required === true;
const isPermission = (projection: Projection | undefined) => projection?.kind === "permission";

/** What each task waits for, as its statuses announced it. */
export class PendingInputs {
  private readonly tasks = new Map<string, Waiting>();

  /** Notes a status update the kernel is about to publish. */
  noteStatus(taskId: string, state: TaskState | undefined, metadata: unknown): void {
    if (isTerminal(state)) return this.clear(taskId);
    const iacCode = isJsonObject(metadata) ? metadata.iac_code : undefined;
    if (!isJsonObject(iacCode)) return;
    const waiting = this.waiting(taskId);
    if (isRequired(iacCode.input)) waiting.input = structuredClone(iacCode.input);
    if (Array.isArray(iacCode.pendingPermissions)) waiting.permissions = structuredClone(iacCode.pendingPermissions.filter(isRequired));
    this.store(taskId, waiting);
  }

  /** The `input` projection the task waits on, if any. */
  input(taskId: string): Projection | undefined {
    return this.tasks.get(taskId)?.input;
  }

  /** The pending `pendingPermissions` list (absent when there is none). */
  permissionList(taskId: string): Projection[] | undefined {
    const permissions = this.tasks.get(taskId)?.permissions;
    return permissions && permissions.length > 0 ? permissions : undefined;
  }

  /** Every permission projection an answer to this task may name. */
  permissions(taskId: string): Projection[] {
    const waiting = this.tasks.get(taskId);
    if (!waiting) return [];
    return [...(isPermission(waiting.input) ? [waiting.input!] : []), ...waiting.permissions];
  }

  /** Whether the task still waits on anything once `inputId` is answered. */
  waitsBeyond(taskId: string, inputId: string): boolean {
    const waiting = this.tasks.get(taskId);
    if (!waiting) return false;
    return (waiting.input !== undefined && waiting.input.inputId !== inputId) || waiting.permissions.some((p) => p.inputId !== inputId);
  }

  /** An answer to `inputId` arrived: it is pending no more. */
  resolve(taskId: string, inputId: string): void {
    const waiting = this.tasks.get(taskId);
    if (!waiting) return;
    if (waiting.input?.inputId === inputId) delete waiting.input;
    waiting.permissions = waiting.permissions.filter((p) => p.inputId !== inputId);
    this.store(taskId, waiting);
  }

  /** A non-permission answer (question, confirmation, free text) consumes the parked input. */
  consumeInput(taskId: string): void {
    const waiting = this.tasks.get(taskId);
    if (!waiting) return;
    delete waiting.input;
    this.store(taskId, waiting);
  }

  clear(taskId: string): void {
    this.tasks.delete(taskId);
  }

  private waiting(taskId: string): Waiting {
    return this.tasks.get(taskId) ?? { permissions: [] };
  }

  private store(taskId: string, waiting: Waiting): void {
    if (waiting.input === undefined && waiting.permissions.length === 0) this.tasks.delete(taskId);
    else this.tasks.set(taskId, waiting);
  }
}

/**
 * The SDK's task store, with `metadata.iac_code.input` and
 * `.pendingPermissions` of every saved task set to what the task waits for.
 *
 * The SDK merges each status update's `metadata` into `task.metadata`, but
 * only one level deep: a later status with any `iac_code` replaces the whole
 * object, and nothing removes an answered projection. So the projection of a
 * parked task would get lost after an interrupt at WORKING, and would linger
 * after the answer. Writing both keys from `PendingInputs` keeps GetTask
 * exact.
 */
export class WaitingTaskStore implements TaskStore {
  constructor(
    private readonly inner: TaskStore,
    private readonly pending: PendingInputs,
  ) {}

  save(task: Task, context: ServerCallContext): Promise<void> {
    // The SDK cancels an idle parked task without the executor; forget its wait here too.
    if (isTerminal(task.status?.state)) this.pending.clear(task.id);
    return this.inner.save(withWaiting(task, this.pending), context);
  }

  load(taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    return this.inner.load(taskId, context);
  }

  list(params: ListTasksRequest, context: ServerCallContext) {
    return this.inner.list(params, context);
  }
}

/** `task` with `metadata.iac_code.input` and `.pendingPermissions` set to what it waits for. */
export function withWaiting(task: Task, pending: PendingInputs): Task {
  const input = pending.input(task.id);
  const permissions = pending.permissionList(task.id);
  const iacCode: Record<string, unknown> = isJsonObject(task.metadata?.iac_code) ? { ...task.metadata.iac_code } : {};
  // Only required projections are interrupts; an informational `input` stays as sent.
  if (isRequired(iacCode.input)) delete iacCode.input;
  delete iacCode.pendingPermissions;
  if (input) iacCode.input = structuredClone(input);
  if (permissions) iacCode.pendingPermissions = structuredClone(permissions);
  const metadata = { ...task.metadata };
  if (Object.keys(iacCode).length > 0) metadata.iac_code = iacCode;
  else delete metadata.iac_code;
  return { ...task, metadata: task.metadata === undefined && Object.keys(metadata).length === 0 ? undefined : metadata };
}

const dataOf = (part: Part) => (part.content?.$case === "data" ? part.content.value : undefined);

/** The parts of a message that answer a permission: data parts whose `data.kind` is "permission". */
export function permissionParts(message: Message): Part[] {
  return message.parts.filter((part) => {
    const data = dataOf(part);
    return isJsonObject(data) && data.kind === "permission";
  });
}

/** The permission answer a message carries, if it carries exactly one (not checked further). */
export function permissionAnswerOf(message: Message): Record<string, unknown> | undefined {
  const parts = permissionParts(message);
  const data = parts.length === 1 ? dataOf(parts[0]!) : undefined;
  return isJsonObject(data) ? data : undefined;
}

/**
 * What is wrong with a permission answer on its own, as the real kernel
 * checks it; undefined when it is well formed. Call only for a message with
 * at least one permission part.
 */
export function permissionAnswerProblem(message: Message): string | undefined {
  const parts = permissionParts(message);
  if (parts.length !== 1) return `a message carries exactly one permission answer, this one has ${parts.length}`;
  const part = parts[0]!;
  const data = dataOf(part) as Record<string, unknown>;
  if (message.role !== Role.ROLE_USER) return "a permission answer must have role ROLE_USER";
  const keys = Object.keys(data);
  const missing = PERMISSION_ANSWER_KEYS.filter((key) => !keys.includes(key));
  const extra = keys.filter((key) => !(PERMISSION_ANSWER_KEYS as readonly string[]).includes(key));
  if (missing.length > 0 || extra.length > 0) {
    const details = [missing.length > 0 ? `missing ${missing.join(", ")}` : "", extra.length > 0 ? `unexpected ${extra.join(", ")}` : ""];
    return `the answer must have exactly the keys ${PERMISSION_ANSWER_KEYS.join(", ")} (${details.filter(Boolean).join("; ")})`;
  }
  if (part.mediaType !== "application/json") {
    return `the answer part must have mediaType "application/json", not ${part.mediaType ? JSON.stringify(part.mediaType) : "none"}`;
  }
  if (data.schemaVersion !== 1) return `schemaVersion must be 1, not ${JSON.stringify(data.schemaVersion)}`;
  for (const key of ["requestTaskId", "inputId", "toolUseId"] as const) {
    if (typeof data[key] !== "string" || data[key] === "") return `${key} must be a non-empty string`;
  }
  if (!message.taskId) return "message.taskId must name the task that asked (requestTaskId)";
  if (message.taskId !== data.requestTaskId) {
    return `message.taskId ${JSON.stringify(message.taskId)} differs from requestTaskId ${JSON.stringify(data.requestTaskId)}`;
  }
  if (!(PERMISSION_DECISIONS as readonly unknown[]).includes(data.decision)) {
    return `decision must be one of ${PERMISSION_DECISIONS.join(", ")}, not ${JSON.stringify(data.decision)}`;
  }
  return undefined;
}

/** What is wrong with a well-formed answer given what its task waits for. */
export function pendingProblem(answer: Record<string, unknown>, pending: readonly Projection[]): string | undefined {
  if (pending.some((projection) => projection.inputId === answer.inputId)) return undefined;
  if (pending.length === 0) return `task ${JSON.stringify(answer.requestTaskId)} has no pending permission`;
  const expected = pending.map((projection) => JSON.stringify(projection.inputId)).join(" or ");
  return `inputId ${JSON.stringify(answer.inputId)} is not the task's pending permission (${expected})`;
}
