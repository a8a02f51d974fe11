/**
 * The ProtoJSON shapes the kernel specs read off the wire. The SDK's own
 * types are its decoded form (numeric enums, `$case` payloads), so they do
 * not describe these bytes. Only the fields the specs look at are listed,
 * and nothing checks them at run time: the specs' assertions do.
 */

export interface WirePart {
  text?: string;
  data?: unknown;
  mediaType?: string;
}

export interface WireMessage {
  messageId: string;
  role: string;
  parts: WirePart[];
  taskId?: string;
  contextId?: string;
}

export interface WireStatus {
  state: string;
  message?: WireMessage;
  /** When the kernel recorded the status (ISO 8601). */
  timestamp?: string;
}

/** A kernel input projection (wire contract §5): open, as the contract lets the kernel add fields. */
export interface WireProjection {
  kind: string;
  inputId: string;
  scope?: string;
  subPipelineId?: string;
  [field: string]: unknown;
}

export interface WireToolReport {
  status: string;
  toolUseId: string;
  name?: string;
  result?: unknown;
}

/** Where an envelope happened: a step, a candidate or a candidate's step. */
export interface WireCoordinate {
  id: string;
  runId?: string;
  attempt?: number;
  index?: number;
}

/** A pipeline event envelope (wire contract §4). */
export interface WireEnvelope {
  eventId: string;
  sequence: number;
  createdAt: string;
  eventType: string;
  pipelineRunId: string;
  scope: string;
  status: string;
  step?: WireCoordinate;
  candidate?: WireCoordinate;
  candidateStep?: WireCoordinate;
  data: Record<string, unknown>;
  [field: string]: unknown;
}

/** `metadata.iac_code` of a status update or task. */
export interface WireIacCode {
  iacCodeSessionId?: string;
  assistantFinal?: boolean;
  tool?: WireToolReport;
  input?: WireProjection;
  pendingPermissions?: WireProjection[];
  pipeline?: WireEnvelope;
  pipelineBatch?: { schemaVersion: string; extensionUri: string; events: WireEnvelope[] };
}

export interface WireMetadata {
  iac_code?: WireIacCode;
}

export interface WireTask {
  id: string;
  contextId: string;
  status: WireStatus;
  history?: WireMessage[];
  metadata?: WireMetadata;
}

export interface WireStatusUpdate {
  taskId: string;
  contextId: string;
  status: WireStatus;
  metadata?: WireMetadata;
}

/** A2A 1.0 `StreamResponse`: exactly one of its keys is set. */
export interface WireStreamResponse {
  task?: WireTask;
  statusUpdate?: WireStatusUpdate;
  artifactUpdate?: Record<string, unknown>;
  message?: WireMessage;
}

export interface JsonRpcError {
  code: number;
  message: string;
  data?: unknown;
}

export interface JsonRpcReply<Result> {
  jsonrpc: "2.0";
  id: string | number | null;
  result?: Result;
  error?: JsonRpcError;
}

/** What each JSON-RPC method the specs call answers with. */
export interface RpcResults {
  GetTask: WireTask;
  /** The context's tasks, newest first. */
  ListTasks: { tasks: WireTask[] };
  CancelTask: WireTask;
  /** A task (or a message), wrapped by key like a stream frame. */
  SendMessage: WireStreamResponse;
  SendStreamingMessage: WireStreamResponse;
  SubscribeToTask: WireStreamResponse;
}

/** The recovery snapshot of a pipeline run (wire contract §6), as far as the specs read it. */
export interface WireSnapshot {
  status: string;
  generatedAt: string;
  steps: Array<{
    id: string;
    status: string;
    selectedCandidateId: string | null;
    candidates: Array<{ id: string; status: string; selected: boolean }>;
  }>;
  display: {
    messages: Array<{ id: string; text: string; thinking: string }>;
    toolResults: unknown[];
    permissions: unknown[];
  };
  stacks: Array<{ stackName: string; status: string }>;
  cleanup: Record<string, unknown> | null;
  [field: string]: unknown;
}

/** What `GET /iac-code/pipeline/state` answers: the events after a sequence and the snapshot, or an error. */
export interface RecoveryBody {
  events: WireEnvelope[];
  snapshot: WireSnapshot | null;
  error?: { code: string; message: string };
}
