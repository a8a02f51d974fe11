// Child process of spec/lib/state/file-thread-store-crash.spec.ts: saves the
// states of a few threads through the compiled store, in a tight loop with
// growing content, and prints `saved <n>` after each round so the parent can
// SIGKILL it at a point it chose by output, not by time.
//
// Usage: node spec/support/state-writer.mjs <stateDir> <threadCount> <firstSequence>
import { createHash } from "node:crypto";
import { FileThreadStore } from "../../dist/lib/state/file-thread-store.js";

const [stateDir, threadCountText = "3", firstSequenceText = "0"] = process.argv.slice(2);
if (!stateDir) throw new Error("usage: state-writer.mjs <stateDir> <threadCount> <firstSequence>");
const threadCount = Number(threadCountText);
const firstSequence = Number(firstSequenceText);

const sha256 = (text) => createHash("sha256").update(text).digest("hex");
// Up to ~4,000 digests (about 280 KB per file), so a kill often lands inside a write.
const POOL = Array.from({ length: 4000 }, (_, i) => sha256(String(i)));

/** A state the parent can check for internal consistency: the digest count follows from pipelineSequence. */
function crashState(threadId, sequence) {
  const count = (sequence * 37) % POOL.length;
  return {
    schemaVersion: 1,
    threadId,
    contextId: `agui-${threadId}`,
    cwd: "/workspace",
    userId: null,
    iacCodeSessionId: null,
    execution: {
      executionId: "exec-1",
      rosInvocationId: "ros-1",
      taskId: `task-${sequence}`,
      lastTaskId: null,
      pipelineSequence: sequence,
      pipelineOpenSteps: [`step:${sequence}`],
      textSnapshotDigests: POOL.slice(0, count),
      pending: {},
    },
    runDigests: { [`run-${sequence}`]: sha256(`run-${sequence}`) },
    appliedResumeDigests: [],
    terminalExecutionIds: [],
  };
}

const store = new FileThreadStore({ stateDir });
// Ids in all three stem forms: raw, hex-encoded, hashed.
const threadIds = ["crash-a", "Crash-B", "c".repeat(150) + "é", "crash-d", "crash-e"].slice(0, threadCount);
for (let round = 1; ; round++) {
  await Promise.all(threadIds.map((threadId) => store.save(crashState(threadId, firstSequence + round))));
  process.stdout.write(`saved ${round}\n`);
}
