/** Valid thread states and a scratch state directory for the store specs. */
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { ThreadState } from "../../../lib/state/thread-state.js";

export const sha256 = (text: string): string => createHash("sha256").update(text, "utf8").digest("hex");

export function threadState(threadId: string, overrides: Partial<ThreadState> = {}): ThreadState {
  return {
    schemaVersion: 1,
    threadId,
    contextId: `agui-${threadId}`,
    cwd: "/workspace/project",
    userId: "user-1",
    iacCodeSessionId: null,
    execution: {
      executionId: "0b6c6f3e-8f0e-4a57-9d57-3f0c5d1c2a10",
      rosInvocationId: "ros-1",
      taskId: "task-1",
      lastTaskId: null,
      pipelineSequence: 3,
      pipelineOpenSteps: ["step:plan", "candidate:c1:deploy"],
      textSnapshotDigests: [sha256("hello")],
      pending: {
        "input-1": {
          value: { inputId: "input-1", kind: "permission", toolUseId: "tool-1", toolName: "ros_deploy", title: "Deploy?", required: true },
          sideband: false,
          expiresAt: "2030-01-01T00:00:00.000Z",
        },
      },
    },
    runDigests: { "run-1": sha256("run-1") },
    appliedResumeDigests: [{ executionId: "0b6c6f3e-8f0e-4a57-9d57-3f0c5d1c2a10", interruptId: "input-0", digest: sha256("resume") }],
    terminalExecutionIds: ["exec-0"],
    ...overrides,
  };
}

export interface ScratchDir {
  path: string;
  remove(): void;
}

export function scratchDir(prefix = "agui-store-"): ScratchDir {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  return { path: dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
