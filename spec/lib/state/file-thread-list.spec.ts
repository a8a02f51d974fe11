/** The file store's list of threads (the contract in `thread-list-contract.ts`), from its files' modification times. */
import { mkdirSync, utimesSync, writeFileSync } from "node:fs";
import { describe } from "@jest/globals";
import { FileThreadStore } from "../../../lib/state/file-thread-store.js";
import { describeThreadListContract } from "./thread-list-contract.js";
import { scratchDir } from "./thread-state-fixture.js";

describe("FileThreadStore.listThreads", () => {
  describeThreadListContract(async () => {
    const dir = scratchDir();
    const store = new FileThreadStore({ stateDir: dir.path });
    return {
      store,
      saveAt: async (state, atMs) => {
        await store.save(state);
        utimesSync(store.fileFor(state.threadId), new Date(atMs), new Date(atMs));
      },
      writeRaw: async (threadId, content) => {
        mkdirSync(store.threadsDir, { recursive: true });
        writeFileSync(store.fileFor(threadId), content);
      },
      remove: async () => dir.remove(),
    };
  });
});
