/** What the store writes, it reads back: the one size cap (MAX_JSON_FILE_BYTES) holds for both. */
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "@jest/globals";
import { MAX_JSON_FILE_BYTES } from "../../../lib/state/atomic-json-adapter.js";
import { FileThreadStore, threadFileStem } from "../../../lib/state/file-thread-store.js";
import type { ThreadState } from "../../../lib/state/thread-state.js";
import { StatePersistenceError } from "../../../lib/state/thread-store.js";
import { scratchDir, threadState, type ScratchDir } from "./thread-state-fixture.js";

let scratch: ScratchDir;
let store: FileThreadStore;
beforeEach(() => {
  scratch = scratchDir();
  store = new FileThreadStore({ stateDir: scratch.path });
});
afterEach(() => scratch.remove());

/** A state with one pending question of `count` options. */
function withOptions(threadId: string, count: number): ThreadState {
  const base = threadState(threadId);
  const options = Array.from({ length: count }, (_, i) => ({ id: `option-${i}`, label: `Option number ${i}` }));
  return {
    ...base,
    execution: {
      ...base.execution,
      pending: { "q-1": { value: { inputId: "q-1", kind: "ask_user_question", options, required: true }, sideband: false } },
    },
  };
}

describe("FileThreadStore: the size cap", () => {
  it("refuses to save a state whose file would exceed the read cap, and leaves the stored one as it was", async () => {
    await store.save(threadState("t"));
    const file = path.join(scratch.path, "threads", `${threadFileStem("t")}.json`);
    const before = readFileSync(file, "utf8");

    const saving = store.save(withOptions("t", 100_000));
    await expect(saving).rejects.toThrow(StatePersistenceError);
    await expect(saving).rejects.toThrow(/larger than 4194304 bytes/);

    expect(readFileSync(file, "utf8")).toBe(before);
    expect(readdirSync(path.join(scratch.path, "threads"))).toEqual([`${threadFileStem("t")}.json`]);
    expect(await store.load("t")).toEqual(threadState("t"));
  });

  it("saves a large state that fits, and loads it back", async () => {
    const large = withOptions("large", 20_000);
    await store.save(large);
    const size = statSync(path.join(scratch.path, "threads", `${threadFileStem("large")}.json`)).size;
    expect(size).toBeGreaterThan(MAX_JSON_FILE_BYTES / 4);
    expect(size).toBeLessThanOrEqual(MAX_JSON_FILE_BYTES);
    expect(await store.load("large")).toEqual(large);
  });
});
