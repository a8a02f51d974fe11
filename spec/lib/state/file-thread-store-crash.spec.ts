/**
 * Kill -9 in the middle of saves, again and again: every state file left
 * behind must still be a complete, valid document (atomic rename), and the
 * temp files of interrupted writes are never mistaken for state.
 *
 * The writer is a separate Node process running the compiled store from
 * `dist/` (npm test builds it first), so the kill is a real process death,
 * not an exception.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { FileThreadStore, threadFileStem } from "../../../lib/state/file-thread-store.js";
import type { ThreadState } from "../../../lib/state/thread-state.js";
import { PROJECT_ROOT } from "../../../lib/paths.js";
import { scratchDir, type ScratchDir } from "./thread-state-fixture.js";

const WRITER = path.join(PROJECT_ROOT, "spec", "support", "state-writer.mjs");
const COMPILED_STORE = path.join(PROJECT_ROOT, "dist", "lib", "state", "file-thread-store.js");
const SOURCES = ["file-thread-store.ts", "atomic-json-adapter.ts", "thread-state-document.ts", "thread-file-stem.ts"].map((file) =>
  path.join(PROJECT_ROOT, "lib", "state", file),
);

/**
 * Starts the writer and SIGKILLs it once it has reported `rounds` rounds of
 * saves; resolves when it is dead. The kill waits on the child's output; the
 * optional `jitterMs` only spreads where inside the next round it lands
 * (building the document, writing, fsync, rename): the outcome must be the
 * same wherever that is.
 */
function killAfter(stateDir: string, firstSequence: number, rounds: number, jitterMs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [WRITER, stateDir, "3", String(firstSequence)], { stdio: ["ignore", "pipe", "pipe"] });
    let seen = 0;
    let killed = false;
    let pending = "";
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.on("data", (chunk: Buffer) => {
      pending += chunk.toString();
      const lines = pending.split("\n");
      pending = lines.pop() ?? "";
      seen += lines.filter((line) => line.startsWith("saved ")).length;
      if (seen >= rounds && !killed) {
        killed = true;
        setTimeout(() => child.kill("SIGKILL"), jitterMs);
      }
    });
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      if (killed && signal === "SIGKILL") resolve(seen);
      else reject(new Error(`state writer exited (${code ?? signal}) after ${seen} rounds, before it was killed:\n${stderr}`));
    });
  });
}

let scratch: ScratchDir;
beforeAll(() => {
  if (!existsSync(COMPILED_STORE)) {
    throw new Error(`${path.relative(PROJECT_ROOT, COMPILED_STORE)} is missing: run \`npm run build\` first (npm test does).`);
  }
  const built = statSync(COMPILED_STORE).mtimeMs;
  const stale = SOURCES.filter((source) => statSync(source).mtimeMs > built);
  if (stale.length > 0) {
    throw new Error(
      `dist/ is older than ${stale.map((s) => path.relative(PROJECT_ROOT, s)).join(", ")}: run \`npm run build\` first (npm test does).`,
    );
  }
  scratch = scratchDir("agui-crash-");
});
afterAll(() => scratch?.remove());

describe("FileThreadStore: crash safety", () => {
  it("leaves only complete, loadable state files after repeated SIGKILLs mid-write", async () => {
    const kills: Array<[rounds: number, jitterMs: number]> = [
      [3, 0],
      [11, 1],
      [7, 2],
      [19, 3],
      [5, 4],
      [13, 5],
      [9, 7],
      [4, 9],
    ];
    for (const [index, [rounds, jitterMs]] of kills.entries()) {
      // Sequences keep rising from kill to kill, and with them the document sizes (up to ~280 KB).
      expect(await killAfter(scratch.path, 40 + index * 15, rounds, jitterMs)).toBeGreaterThanOrEqual(rounds);
    }

    const threadsDir = path.join(scratch.path, "threads");
    const names = readdirSync(threadsDir);
    const stateFiles = names.filter((name) => name.endsWith(".json"));
    expect(stateFiles).toHaveLength(3);

    const store = new FileThreadStore({ stateDir: scratch.path });
    for (const name of stateFiles) {
      const document = JSON.parse(readFileSync(path.join(threadsDir, name), "utf8")) as ThreadState;
      expect(name).toBe(`${threadFileStem(document.threadId)}.json`);
      const loaded = await store.load(document.threadId);
      expect(loaded).toEqual(document);
      // One write, not a mix of two: the content agrees with its own sequence number.
      const sequence = loaded!.execution.pipelineSequence;
      expect(loaded!.execution.textSnapshotDigests).toHaveLength((sequence * 37) % 4000);
      expect(Object.keys(loaded!.runDigests)).toEqual([`run-${sequence}`]);
    }

    // Interrupted writes may leave temp files; none is state, and a sweep removes them.
    const temps = names.filter((name) => !name.endsWith(".json"));
    for (const name of temps) expect(name).toMatch(/^~tmp-\d+-[0-9a-f]{16}\.tmp$/);
    expect(await store.sweepStrayTempFiles(0)).toBe(temps.length);
    expect(readdirSync(threadsDir).sort()).toEqual(stateFiles.sort());
  });
});
