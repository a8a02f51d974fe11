/**
 * Admission must not depend on how many threads are on disk (R-PER-2): the
 * store never lists the threads directory to construct, load or save. The
 * directory-listing calls of `node:fs/promises` are wrapped to count them.
 */
import * as realFs from "node:fs/promises";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, jest } from "@jest/globals";
import { scratchDir, threadState, type ScratchDir } from "./thread-state-fixture.js";

const listings: string[] = [];
jest.unstable_mockModule("node:fs/promises", () => ({
  ...realFs,
  default: realFs,
  readdir: (...args: Parameters<typeof realFs.readdir>) => {
    listings.push(String(args[0]));
    return realFs.readdir(...args);
  },
  opendir: (...args: Parameters<typeof realFs.opendir>) => {
    listings.push(String(args[0]));
    return realFs.opendir(...args);
  },
}));
const { FileThreadStore, threadFileStem } = await import("../../../lib/state/file-thread-store.js");

let scratch: ScratchDir;
beforeAll(() => {
  scratch = scratchDir();
});
afterAll(() => scratch.remove());

describe("FileThreadStore: lazy loading", () => {
  it("constructs, loads and saves without listing any directory; only the background sweep lists, once", async () => {
    const seeding = new FileThreadStore({ stateDir: scratch.path });
    await seeding.save(threadState("seed"));
    await seeding.backgroundSweep;
    for (let i = 0; i < 500; i++) writeFileSync(path.join(scratch.path, "threads", `${threadFileStem(`other-${i}`)}.json`), "{corrupt");
    listings.length = 0;

    const store = new FileThreadStore({ stateDir: scratch.path });
    expect(await store.load("seed")).toEqual(threadState("seed"));
    expect(await store.load("absent")).toBeUndefined();
    expect(listings).toEqual([]);

    await store.save(threadState("new"));
    await store.save(threadState("new", { cwd: "/again" }));
    await store.backgroundSweep;
    expect(listings).toEqual([path.join(scratch.path, "threads")]);
  });

  it("sees the listing calls it counts (the wrapper is live)", async () => {
    const store = new FileThreadStore({ stateDir: scratch.path });
    listings.length = 0;
    await store.sweepStrayTempFiles();
    expect(listings).toHaveLength(1);
  });
});
