/** What the file store writes, it reads back: the one size cap (MAX_JSON_FILE_BYTES) holds for the file on disk. */
import { readdirSync, statSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "@jest/globals";
import { MAX_JSON_FILE_BYTES } from "../../../lib/state/atomic-json-adapter.js";
import { FileThreadStore, threadFileStem } from "../../../lib/state/file-thread-store.js";
import { StatePersistenceError } from "../../../lib/state/thread-store.js";
import { stateOfBytes, withOptions } from "./thread-store-contract.js";
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

  it("writes a state at the cap as a file of exactly the cap: the compact text every store measures", async () => {
    await store.save(stateOfBytes("large", MAX_JSON_FILE_BYTES));
    expect(statSync(path.join(scratch.path, "threads", `${threadFileStem("large")}.json`)).size).toBe(MAX_JSON_FILE_BYTES);
  });
});
