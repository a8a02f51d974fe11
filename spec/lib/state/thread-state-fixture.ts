/** Valid thread states and a scratch state directory for the store specs. */
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { PipelineGraph } from "../../../lib/model/pipeline-graph.js";
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

const stepNode = (id: string, status: "done" | "running" | "failed", key = `step:${id}`) => ({
  key,
  id,
  type: "agent",
  title: `Step ${id}`,
  index: 0,
  status,
  attempt: 1,
  stepRunId: `${id}-run-1`,
  startedAt: "2026-03-12T09:02:41.560Z",
  finishedAt: status === "running" ? null : "2026-03-12T09:02:42.050Z",
  durationMs: status === "running" ? null : 490,
  error: status === "failed" ? { code: "TOOL_FAILED", message: "the stack did not deploy" } : null,
});

/** A paused pipeline's graph: a step done, one running with two candidates (one failed), as a run keeps it at a pause. */
export function pausedGraph(): PipelineGraph {
  return {
    pipelineRunId: "prun-1",
    name: "ros-stack-deploy",
    status: "running",
    steps: [
      { ...stepNode("validate", "done"), selectedCandidateId: null, candidates: [] },
      {
        ...stepNode("generate", "running"),
        index: 1,
        selectedCandidateId: null,
        candidates: [
          {
            id: "c1",
            runId: "c1-run",
            index: 0,
            name: "first",
            status: "running",
            selected: false,
            steps: [stepNode("draft", "running", "candidate:c1:draft")],
          },
          {
            id: "c2",
            runId: null,
            index: 1,
            name: null,
            status: "failed",
            selected: false,
            steps: [stepNode("draft", "failed", "candidate:c2:draft")],
          },
        ],
      },
    ],
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
