/**
 * Renames that come while a directory sync is queued share it and open the
 * directory no extra time, and each commit still waits for a sync that
 * began after its rename. The directory's open and fsync of `node:fs` are
 * wrapped, to count the opens and hold the syncs.
 */
import * as realSyncFs from "node:fs";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it, jest } from "@jest/globals";

const dir = mkdtempSync(path.join(os.tmpdir(), "agui-dir-sync-"));
const events: string[] = [];
const heldSyncs: Array<() => void> = [];
let directoryOpens = 0;
const directoryFds = new Set<number>();

// The commit renames in place where it can (`renameSync`), else through the pool: either is seen.
jest.unstable_mockModule("node:fs", () => {
  const wrapped = {
    ...realSyncFs,
    openSync: (...args: Parameters<typeof realSyncFs.openSync>) => {
      const fd = realSyncFs.openSync(...args);
      if (args[0] === dir) {
        directoryOpens++;
        directoryFds.add(fd);
      }
      return fd;
    },
    fsync: (fd: number, done: (error: NodeJS.ErrnoException | null) => void) => {
      if (!directoryFds.has(fd)) return realSyncFs.fsync(fd, done);
      events.push("sync begins");
      heldSyncs.push(() =>
        realSyncFs.fsync(fd, (error) => {
          events.push("sync ends");
          done(error);
        }),
      );
    },
    closeSync: (fd: number) => {
      directoryFds.delete(fd);
      realSyncFs.closeSync(fd);
    },
    renameSync: (...args: Parameters<typeof realSyncFs.renameSync>) => {
      realSyncFs.renameSync(...args);
      events.push(`renamed ${path.basename(String(args[1]))}`);
    },
    rename: (from: string, to: string, done: (error: NodeJS.ErrnoException | null) => void) =>
      realSyncFs.rename(from, to, (error) => {
        if (!error) events.push(`renamed ${path.basename(to)}`);
        done(error);
      }),
  };
  return { ...wrapped, default: wrapped };
});
const { stageFile } = await import("../../../lib/fs/atomic-write.js");

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Resolves once `check` holds, looking again after each turn of the event loop (no timer). */
async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setImmediate(resolve));
}

describe("stageFile's commit: the directory sync", () => {
  it("opens no directory for a rename that comes while a sync is queued; that rename waits for the queued sync", async () => {
    const write = async (name: string) =>
      (await stageFile(path.join(dir, name), `{"name":"${name}"}`, { tempName: `~tmp-${name}.tmp` })).commit();
    const first = write("a.json");
    await until(() => heldSyncs.length === 1);
    const second = write("b.json");
    await until(() => events.includes("renamed b.json"));
    const third = write("c.json");
    await until(() => events.includes("renamed c.json"));
    // The running sync's open; the sync the second rename queued opens the directory as it begins, and the third rename shares it.
    expect(directoryOpens).toBe(1);

    let settled = 0;
    for (const commit of [first, second, third]) void commit.then(() => settled++);
    heldSyncs.shift()!();
    await first;
    await until(() => heldSyncs.length === 1);
    // The queued sync began after both later renames, and they wait for it.
    expect(events.slice(events.indexOf("renamed b.json"))).toEqual(["renamed b.json", "renamed c.json", "sync ends", "sync begins"]);
    expect(settled).toBe(1);
    heldSyncs.shift()!();
    await Promise.all([second, third]);
    // One open per sync: two in all for three renames, where each commit opening its own made three.
    expect(directoryOpens).toBe(2);
    for (const name of ["a.json", "b.json", "c.json"]) expect(JSON.parse(readFileSync(path.join(dir, name), "utf8"))).toEqual({ name });
    expect(existsSync(path.join(dir, "~tmp-c.json.tmp"))).toBe(false);
  });
});
