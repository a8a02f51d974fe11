/** Kernel input projections as the contract (§5) and the reference kernel shape them. */
import type { InputProjection, PendingInput } from "../../../lib/state/thread-state.js";

export const TASK = "task-1";
export const CONTEXT = "agui-0123456789abcdef0123456789abcdef01234567";

export const permission: InputProjection = {
  schemaVersion: 1,
  kind: "permission",
  requestTaskId: TASK,
  contextId: CONTEXT,
  inputId: "perm-1",
  toolUseId: "tool-perm",
  toolName: "ros_deploy",
  title: "Deploy stack",
  prompt: "Allow ros_deploy to create the stack?",
  required: true,
};

export const question: InputProjection = {
  schemaVersion: 1,
  kind: "ask_user_question",
  requestTaskId: TASK,
  contextId: CONTEXT,
  inputId: "q-1",
  toolUseId: "tool-q",
  prompt: "Which region?",
  options: [
    { id: "hz", label: "Hangzhou" },
    { id: "bj", name: "Beijing" },
  ],
  allowFreeText: true,
  required: true,
};

export const candidates: InputProjection = {
  schemaVersion: 1,
  kind: "candidate_selection",
  requestTaskId: TASK,
  contextId: CONTEXT,
  inputId: "cand-1",
  prompt: "Pick a plan",
  options: [
    { candidate_index: 0, name: "Small" },
    { candidate_index: 1, name: "Large" },
  ],
  required: true,
};

export const deployment: InputProjection = {
  schemaVersion: 1,
  kind: "deployment_confirmation",
  requestTaskId: TASK,
  contextId: CONTEXT,
  inputId: "deploy-1",
  toolUseId: "tool-deploy",
  prompt: "Deploy now?",
  options: [
    { id: "go", label: "Deploy", action: "confirm" },
    { id: "tweak", label: "Adjust parameters", action: "adjust" },
    { id: "stop", label: "Cancel", action: "cancel" },
  ],
  required: true,
};

export const resource: InputProjection = {
  schemaVersion: 1,
  kind: "cloud_resource_selection",
  requestTaskId: TASK,
  contextId: CONTEXT,
  inputId: "resource-" + "a".repeat(32),
  toolUseId: "tool-res",
  prompt: "Choose a VPC",
  selector: { id: "vpc.vpc", associationPropertyMetadata: { RegionId: "cn-hangzhou" }, source: null },
  required: true,
};

export const pendingOf = (value: InputProjection, extra: Partial<PendingInput> = {}): PendingInput => ({
  value,
  sideband: false,
  ...extra,
});
