/**
 * Persist before announce rests on what a save has done by the time it
 * resolves (a run's first event waits for its admission's save): the new
 * version complete in its temp file and that file's data synced, then the
 * rename, then the directory synced so the rename survives a power loss. The
 * calls that change or sync the disk are wrapped to log them in order.
 */
import * as realFs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it, jest } from "@jest/globals";
import { scratchDir, sha256, threadState, type ScratchDir } from "./thread-state-fixture.js";

const steps: string[] = [];
/** How each rename was made: on the event loop (`renameSync`) or in the thread pool (`rename`). */
const renames: Array<"in place" | "in pool"> = [];
const name = (file: string) => path.basename(file);
const isTemp = (file: string) => name(file).startsWith("~tmp-");
/** What each open descriptor was opened as, for the log of its syncs. */
const opened = new Map<number, string>();
const opening = (file: string, fd: number) => opened.set(fd, isTemp(file) ? "temp" : name(file));

type Done = (error: NodeJS.ErrnoException | null) => void;
/** A real sync of `fd`, logged with the name it was opened under once it is done. */
const logged = (sync: "datasync" | "sync", call: (fd: number, done: Done) => void) => (fd: number, done: Done) =>
  call(fd, (error) => {
    if (!error) steps.push(`${sync} ${opened.get(fd) ?? "?"}`);
    done(error);
  });

const renamed = (from: string, to: string) => {
  // What the target is about to hold: it must be the whole new version, already on disk.
  const text = realFs.readFileSync(from, "utf8");
  steps.push(`rename temp → ${name(to)} (${JSON.parse(text) ? "complete" : "torn"})`);
};

jest.unstable_mockModule("node:fs", () => {
  const wrapped = {
    ...realFs,
    open: (file: string, flags: number, mode: number, done: (error: NodeJS.ErrnoException | null, fd: number) => void) =>
      realFs.open(file, flags, mode, (error, fd) => {
        if (!error) opening(file, fd);
        done(error, fd);
      }),
    openSync: (file: string, flags: number) => {
      const fd = realFs.openSync(file, flags);
      opening(file, fd);
      return fd;
    },
    fdatasync: logged("datasync", realFs.fdatasync),
    fsync: logged("sync", realFs.fsync),
    rename: (from: string, to: string, done: Done) => {
      renames.push("in pool");
      renamed(from, to);
      realFs.rename(from, to, done);
    },
    renameSync: (from: string, to: string) => {
      renames.push("in place");
      renamed(from, to);
      realFs.renameSync(from, to);
    },
  };
  return { ...wrapped, default: wrapped };
});
const { FileThreadStore } = await import("../../../lib/state/file-thread-store.js");

let scratch: ScratchDir;
beforeAll(() => {
  scratch = scratchDir();
});
afterAll(() => scratch.remove());
beforeEach(() => {
  steps.length = 0;
  renames.length = 0;
});

/** The steps of one save that touch the disk's durability, in order, and the save's end among them. */
async function savedSteps(save: () => Promise<void>): Promise<string[]> {
  await save();
  steps.push("save resolved");
  return [...steps];
}

const ORDER = (stem: string) => ["datasync temp", `rename temp → ${stem}.json (complete)`, "sync threads", "save resolved"];

describe("FileThreadStore: a save is durable by the time it resolves", () => {
  it("syncs the temp file's data, renames it, then syncs the directory, before resolving (a new thread's file)", async () => {
    const store = new FileThreadStore({ stateDir: scratch.path });
    const state = threadState("sync-order-new");
    expect(await savedSteps(() => store.save(state))).toEqual(ORDER(path.basename(store.fileFor(state.threadId), ".json")));
    expect(await store.load(state.threadId)).toEqual(state);
  });

  it("does the same when replacing a thread's file, and with its temp file created ahead (a run's admission)", async () => {
    const store = new FileThreadStore({ stateDir: scratch.path });
    const state = threadState("sync-order-known");
    await store.save(state);
    const lease = await store.tryAcquire(state.threadId);
    const prepared = store.prepareWrite(state.threadId);
    steps.length = 0;
    const next = { ...state, runDigests: { ...state.runDigests, "run-2": sha256("run-2") } };
    const stem = path.basename(store.fileFor(state.threadId), ".json");
    expect(await savedSteps(() => store.save(next, lease, { prepared }))).toEqual(ORDER(stem));
    expect(await store.load(state.threadId)).toEqual(next);
    await lease?.release();
  });

  it("renames on the event loop by default, and in the thread pool for a write kept off it, as durably", async () => {
    const store = new FileThreadStore({ stateDir: scratch.path });
    const state = threadState("sync-order-off-loop");
    await store.save(state);
    const stem = path.basename(store.fileFor(state.threadId), ".json");
    const next = { ...state, runDigests: { ...state.runDigests, "run-3": sha256("run-3") } };
    steps.length = 0;
    expect(await savedSteps(() => store.save(next, undefined, { offLoop: true }))).toEqual(ORDER(stem));
    expect(await store.load(state.threadId)).toEqual(next);
    expect(renames).toEqual(["in place", "in pool"]);
  });

  it("resolves only after the directory's sync, even while another save of the directory is syncing it", async () => {
    const store = new FileThreadStore({ stateDir: scratch.path });
    const [first, second] = [threadState("sync-order-a"), threadState("sync-order-b")];
    const saves = [store.save(first), store.save(second).then(() => steps.push("second resolved"))];
    await Promise.all(saves);
    const lastRename = steps.map((step) => step.startsWith("rename")).lastIndexOf(true);
    const syncAfterRename = steps.findIndex((step, at) => at > lastRename && step === "sync threads");
    expect(syncAfterRename).toBeGreaterThan(lastRename);
    expect(steps.indexOf("second resolved")).toBeGreaterThan(syncAfterRename);
    expect(steps.filter((step) => step === "datasync temp")).toHaveLength(2);
    for (const rename of steps.filter((step) => step.startsWith("rename"))) expect(rename).toMatch(/\(complete\)$/);
  });
});
