/** What the file store writes, it reads back: the one size cap (MAX_JSON_FILE_BYTES) holds for the file on disk. */
import { readdirSync, statSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "@jest/globals";
import { MAX_JSON_FILE_BYTES } from "../../../lib/state/atomic-json-adapter.js";
import { FileThreadStore, threadFileStem } from "../../../lib/state/file-thread-store.js";
import { StatePersistenceError } from "../../../lib/state/thread-store.js";
import { withOptions } from "./thread-store-contract.js";
import { scratchDir, threadState, type ScratchDir } from "./thread-state-fixture.js";

let scratch: ScratchDir;
let store: FileThreadStore;
beforeEach(() => {
  scratch = scratchDir();
  store = new FileThreadStore({ stateDir: scratch.path });
});
afterEach(() => scratch.remove());

describe("FileThreadStore: the size cap", () => {
  it("refuses a state whose file would exceed the read cap without leaving a temp file", async () => {
    await store.save(threadState("t"));
    await expect(store.save(withOptions("t", 100_000))).rejects.toThrow(StatePersistenceError);
    expect(readdirSync(path.join(scratch.path, "threads"))).toEqual([`${threadFileStem("t")}.json`]);
  });

  it("writes a large state that fits as a file within the cap", async () => {
    await store.save(withOptions("large", 20_000));
    const size = statSync(path.join(scratch.path, "threads", `${threadFileStem("large")}.json`)).size;
    expect(size).toBeGreaterThan(MAX_JSON_FILE_BYTES / 4);
    expect(size).toBeLessThanOrEqual(MAX_JSON_FILE_BYTES);
  });
});
