/**
 * Kernel scripts for interrupt tests: turn 0 parks the task on an input
 * projection shaped as the wire contract §5 says; turn 1 (the resume) goes
 * on. The replay kernel fills `${taskId}` and `${contextId}`.
 */
import type { FixtureLine, ReplayTurn } from "../../lib/kernel/replay-kernel.js";
import { script } from "./service.js";

export const permissionProjection = {
  schemaVersion: 1,
  kind: "permission",
  requestTaskId: "${taskId}",
  contextId: "${contextId}",
  inputId: "perm-1",
  toolUseId: "toolu-deploy",
  toolName: "ros_deploy_stack",
  title: "Deploy stack demo-vpc",
  prompt: "Allow deploying stack demo-vpc?",
  safeSummary: "Creates 3 resources in cn-hangzhou",
  effect: "write",
  target: "demo-vpc",
  isReadOnly: false,
  required: true,
  // Not in the kept fields: must never reach the client or the disk.
  internalToken: "kernel-internal-secret",
};

export const questionProjection = {
  schemaVersion: 1,
  kind: "ask_user_question",
  requestTaskId: "${taskId}",
  contextId: "${contextId}",
  inputId: "q-1",
  toolUseId: "toolu-ask",
  toolName: "AskUserQuestion",
  prompt: "Which region?",
  required: true,
  options: [
    { id: "cn-hangzhou", label: "Hangzhou" },
    { id: "cn-shanghai", label: "Shanghai" },
  ],
};

export const resourceSelectionProjection = {
  schemaVersion: 1,
  kind: "cloud_resource_selection",
  requestTaskId: "${taskId}",
  contextId: "${contextId}",
  inputId: "resource-" + "b".repeat(32),
  toolUseId: "toolu-select",
  toolName: "SelectCloudResource",
  prompt: "Choose a VPC",
  selector: { id: "vpc.vpc", associationPropertyMetadata: { RegionId: "cn-hangzhou" } },
  required: true,
};

const parked = (input: Record<string, unknown>, text: string): FixtureLine[] => [
  script.task(),
  script.status("WORKING", { iacCodeSessionId: "sess-${contextId}" }, text),
  script.status("WORKING", { tool: { status: "started", toolUseId: input.toolUseId, name: input.toolName } }),
  script.status("INPUT_REQUIRED", { input }),
];

/** Turn 0 parks on `input`; the resume turn answers with text that first repeats turn 0's (contract §6), then completes. */
export function interruptScript(name: string, input: Record<string, unknown>) {
  const tasks = new Set<string>();
  return (turn: ReplayTurn): FixtureLine[] | undefined => {
    if (turn.turnIndex === 0) {
      if (!turn.text.startsWith(name)) return undefined;
      tasks.add(turn.taskId);
      return parked(input, "I will deploy the stack. ");
    }
    if (!tasks.has(turn.taskId)) return undefined;
    return [
      script.status("WORKING", { tool: { status: "completed", toolUseId: input.toolUseId, name: input.toolName, result: "ok" } }),
      script.status("WORKING", undefined, "I will deploy the stack. Done."),
      script.status("COMPLETED"),
    ];
  };
}
