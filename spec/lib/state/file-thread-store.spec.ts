import { chmodSync, lstatSync, mkdirSync, readFileSync, readdirSync, statSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { readFile } from "node:fs/promises";
import { afterEach, beforeEach, describe, expect, it } from "@jest/globals";
import { FileThreadStore, threadFileStem } from "../../../lib/state/file-thread-store.js";
import { KEPT_INPUT_FIELDS } from "../../../lib/state/thread-state.js";
import { StatePersistenceError, StateUnavailableError } from "../../../lib/state/thread-store.js";
import { THREAD_STATE_SCHEMA_FILE } from "../../../lib/state/thread-state-document.js";
import { describeThreadStoreContract } from "./thread-store-contract.js";
import { scratchDir, threadState, type ScratchDir } from "./thread-state-fixture.js";

const POSIX = process.platform !== "win32";
const itPosix = POSIX ? it : it.skip;

let scratch: ScratchDir;
let store: FileThreadStore;
const threadsDir = () => path.join(scratch.path, "threads");
const fileOf = (threadId: string) => path.join(threadsDir(), `${threadFileStem(threadId)}.json`);
const writeRaw = (threadId: string, content: string | Buffer) => {
  mkdirSync(threadsDir(), { recursive: true });
  writeFileSync(fileOf(threadId), content);
};
const modeOf = (file: string) => statSync(file).mode & 0o777;

describeThreadStoreContract("FileThreadStore", async () => {
  const dir = scratchDir();
  const files = new FileThreadStore({ stateDir: dir.path });
  return {
    store: files,
    writeRaw: async (threadId, content) => {
      mkdirSync(files.threadsDir, { recursive: true });
      writeFileSync(files.fileFor(threadId), content);
    },
    readRaw: (threadId) => readFile(files.fileFor(threadId), "utf8").catch(() => undefined),
    where: (threadId) => path.basename(files.fileFor(threadId)),
    remove: async () => dir.remove(),
  };
});

beforeEach(() => {
  scratch = scratchDir();
  store = new FileThreadStore({ stateDir: scratch.path });
});
afterEach(() => scratch.remove());

describe("FileThreadStore: one file per thread", () => {
  it("creates nothing when it loads a thread never saved", async () => {
    expect(await store.load("never-seen")).toBeUndefined();
    expect(readdirSync(scratch.path)).toEqual([]);
  });

  it("keeps a thread's state in its own file", async () => {
    await store.save(threadState("thread-1"));
    expect(readdirSync(threadsDir())).toEqual(["thread-1.json"]);
  });

  it("keeps ids that differ only in case in separate files", async () => {
    await store.save(threadState("abc", { cwd: "/lower" }));
    await store.save(threadState("ABC", { cwd: "/upper" }));
    expect(readdirSync(threadsDir()).sort()).toEqual(["abc.json", "aguiid~414243.json"]);
  });

  it("stores awkward ids (.., con.txt, unicode, 500 characters) under safe names", async () => {
    const ids = ["..", "con.txt", "A", "スレッド/1", "x".repeat(500)];
    for (const id of ids) await store.save(threadState(id));
    expect(readdirSync(scratch.path)).toEqual(["threads"]);
    expect(readdirSync(threadsDir())).toHaveLength(ids.length);
  });

  it("leaves no temp files behind after saves", async () => {
    for (let i = 0; i < 20; i++) await store.save(threadState(`t${i % 3}`, { cwd: `/w/${i}` }));
    expect(readdirSync(threadsDir()).sort()).toEqual(["t0.json", "t1.json", "t2.json"]);
  });

  describe("a write prepared ahead (prepareWrite)", () => {
    const temps = () => readdirSync(threadsDir()).filter((name) => name.endsWith(".tmp"));

    it("creates the save's temp file before the save, which puts it in place as its own", async () => {
      await store.save(threadState("t0"));
      const prepared = store.prepareWrite("t1");
      expect(prepared).toBeDefined();
      for (let turn = 0; turn < 200 && temps().length === 0; turn++) await new Promise((resolve) => setTimeout(resolve, 5));
      const [temp] = temps();
      expect(temp).toMatch(/^~tmp-\d+-[0-9a-f]{16}\.tmp$/);
      if (POSIX) expect(modeOf(path.join(threadsDir(), temp!))).toBe(0o600);
      await store.save(threadState("t1", { cwd: "/w/ahead" }), undefined, { prepared });
      expect(readdirSync(threadsDir()).sort()).toEqual(["t0.json", "t1.json"]);
      expect(await store.load("t1")).toMatchObject({ cwd: "/w/ahead" });
      if (POSIX) expect(modeOf(fileOf("t1"))).toBe(0o600);
      // Taken by its save: nothing is left to discard.
      await prepared!.discard();
      expect(readdirSync(threadsDir()).sort()).toEqual(["t0.json", "t1.json"]);
    });

    it("leaves nothing behind when discarded, or when the save it was for refuses or gives up", async () => {
      await store.save(threadState("t0"));
      await store.prepareWrite("t1")!.discard();
      expect(readdirSync(threadsDir())).toEqual(["t0.json"]);

      const lease = (await store.tryAcquire("t0"))!;
      await lease.release();
      // A lease no longer held: the save refuses before it writes, and discards what was prepared (awaited here).
      const refused = store.prepareWrite("t0")!;
      await expect(store.save(threadState("t0", { cwd: "/w/late" }), lease, { prepared: refused })).rejects.toBeInstanceOf(
        StatePersistenceError,
      );
      await refused.discard();
      expect(readdirSync(threadsDir())).toEqual(["t0.json"]);

      const givenUp = store.prepareWrite("t0")!;
      await expect(
        store.save(threadState("t0", { cwd: "/w/lost" }), undefined, { after: Promise.reject(new Error("lost")), prepared: givenUp }),
      ).rejects.toThrow("lost");
      await givenUp.discard();
      expect(readdirSync(threadsDir())).toEqual(["t0.json"]);
      expect(await store.load("t0")).toMatchObject({ cwd: threadState("t0").cwd });
    });

    it("is used once: a second save given it writes a temp file of its own", async () => {
      const prepared = store.prepareWrite("t0");
      await store.save(threadState("t0", { cwd: "/w/1" }), undefined, { prepared });
      await store.save(threadState("t0", { cwd: "/w/2" }), undefined, { prepared });
      expect(readdirSync(threadsDir())).toEqual(["t0.json"]);
      expect(await store.load("t0")).toMatchObject({ cwd: "/w/2" });
    });
  });

  it("leaves no temp file behind for a save whose `after` failed", async () => {
    await store.save(threadState("t0"));
    await expect(
      store.save(threadState("t0", { cwd: "/w/lost" }), undefined, { after: Promise.reject(new Error("lost")) }),
    ).rejects.toThrow("lost");
    expect(readdirSync(threadsDir())).toEqual(["t0.json"]);
  });

  it("refuses a directory at the thread's path", async () => {
    mkdirSync(fileOf("dir"), { recursive: true });
    await expect(store.load("dir")).rejects.toThrow(/not a regular file/);
  });

  it("loads one thread without reading its corrupt neighbours", async () => {
    await store.save(threadState("good"));
    writeRaw("bad", "{");
    writeFileSync(path.join(threadsDir(), "not-a-thread.txt"), "garbage");
    mkdirSync(path.join(threadsDir(), "some-dir.json"));
    expect(await store.load("good")).toEqual(threadState("good"));
    await expect(store.load("bad")).rejects.toBeInstanceOf(StateUnavailableError);
  });

  it("keeps the schema's kept fields equal to KEPT_INPUT_FIELDS", () => {
    const schema = JSON.parse(readFileSync(THREAD_STATE_SCHEMA_FILE, "utf8")) as { $defs: { inputProjection: { properties: object } } };
    expect(Object.keys(schema.$defs.inputProjection.properties).sort()).toEqual([...KEPT_INPUT_FIELDS].sort());
  });

  it("reports a write failure as StatePersistenceError", async () => {
    writeFileSync(path.join(scratch.path, "threads"), "a file where the directory should be");
    await expect(store.save(threadState("t"))).rejects.toBeInstanceOf(StatePersistenceError);
  });

  it("keeps leases per store instance, independent of the files", async () => {
    await store.tryAcquire("t");
    await store.save(threadState("t"));
    expect(await store.load("t")).toBeDefined();
    expect(await new FileThreadStore({ stateDir: scratch.path }).tryAcquire("t")).toBeDefined();
  });
});

describe("FileThreadStore: file modes and symlinks", () => {
  itPosix("creates the directories 0700 and the files 0600", async () => {
    const nested = path.join(scratch.path, "config", "agui");
    const nestedStore = new FileThreadStore({ stateDir: nested });
    const umask = process.umask(0o000);
    try {
      await nestedStore.save(threadState("t"));
    } finally {
      process.umask(umask);
    }
    expect(modeOf(nested)).toBe(0o700);
    expect(modeOf(path.join(nested, "threads"))).toBe(0o700);
    expect(modeOf(path.join(nested, "threads", "t.json"))).toBe(0o600);
  });

  itPosix(
    "tightens an existing threads directory open to group or others, and leaves an existing state dir as the operator made it",
    async () => {
      mkdirSync(path.join(scratch.path, "threads"));
      chmodSync(scratch.path, 0o755);
      chmodSync(path.join(scratch.path, "threads"), 0o777);
      await store.save(threadState("t"));
      expect(modeOf(threadsDir())).toBe(0o700);
      expect(modeOf(scratch.path)).toBe(0o755);
      expect(modeOf(fileOf("t"))).toBe(0o600);
    },
  );

  itPosix("makes a replaced file 0600 even if the old one was looser", async () => {
    await store.save(threadState("t"));
    chmodSync(fileOf("t"), 0o644);
    await store.save(threadState("t"));
    expect(modeOf(fileOf("t"))).toBe(0o600);
  });

  itPosix("refuses to load through a symlink at the thread's path", async () => {
    const outside = scratchDir("agui-outside-");
    try {
      const target = path.join(outside.path, "planted.json");
      writeFileSync(target, JSON.stringify(threadState("t")));
      mkdirSync(threadsDir());
      symlinkSync(target, fileOf("t"));
      await expect(store.load("t")).rejects.toThrow(StateUnavailableError);
      await expect(store.load("t")).rejects.toThrow(/symbolic link/);
    } finally {
      outside.remove();
    }
  });

  itPosix("does not write through a symlink at the thread's path: it replaces the link and the target stays untouched", async () => {
    const outside = scratchDir("agui-outside-");
    try {
      const target = path.join(outside.path, "victim.txt");
      writeFileSync(target, "original");
      chmodSync(target, 0o644);
      mkdirSync(threadsDir());
      symlinkSync(target, fileOf("t"));
      await store.save(threadState("t"));
      expect(readFileSync(target, "utf8")).toBe("original");
      expect(modeOf(target)).toBe(0o644);
      expect(lstatSync(fileOf("t")).isFile()).toBe(true);
      expect(await store.load("t")).toEqual(threadState("t"));
    } finally {
      outside.remove();
    }
  });

  itPosix("refuses a threads directory that is a symlink", async () => {
    const outside = scratchDir("agui-outside-");
    try {
      symlinkSync(outside.path, threadsDir());
      await expect(store.save(threadState("t"))).rejects.toThrow(/not a directory/);
      expect(readdirSync(outside.path)).toEqual([]);
    } finally {
      outside.remove();
    }
  });
});

describe("FileThreadStore: stray temp files", () => {
  const strayName = "~tmp-4242-0123456789abcdef.tmp";

  it("never reads a stray temp file as state", async () => {
    mkdirSync(threadsDir());
    writeFileSync(path.join(threadsDir(), strayName), JSON.stringify(threadState("t")).slice(0, 40));
    expect(await store.load("t")).toBeUndefined();
  });

  it("sweeps stray temp files older than the grace period, and only those", async () => {
    await store.save(threadState("t"));
    await store.backgroundSweep;
    const old = path.join(threadsDir(), strayName);
    const fresh = path.join(threadsDir(), "~tmp-4242-fedcba9876543210.tmp");
    const lookalike = path.join(threadsDir(), "~tmp-notours.tmp");
    for (const file of [old, fresh, lookalike]) writeFileSync(file, "partial");
    const longAgo = new Date(Date.now() - 3_600_000);
    utimesSync(old, longAgo, longAgo);
    utimesSync(lookalike, longAgo, longAgo);
    expect(await store.sweepStrayTempFiles()).toBe(1);
    expect(readdirSync(threadsDir()).sort()).toEqual(["t.json", "~tmp-4242-fedcba9876543210.tmp", "~tmp-notours.tmp"]);
  });

  it("sweeps old stray temp files in the background after the first save", async () => {
    mkdirSync(threadsDir());
    const old = path.join(threadsDir(), strayName);
    writeFileSync(old, "partial");
    const longAgo = new Date(Date.now() - 3_600_000);
    utimesSync(old, longAgo, longAgo);
    expect(store.backgroundSweep).toBeUndefined();
    await store.load("t");
    expect(store.backgroundSweep).toBeUndefined();
    await store.save(threadState("t"));
    expect(await store.backgroundSweep).toBe(1);
    expect(readdirSync(threadsDir())).toEqual(["t.json"]);
  });

  it("sweeps nothing, and does not fail, before the threads directory exists", async () => {
    expect(await store.sweepStrayTempFiles(0)).toBe(0);
  });
});
