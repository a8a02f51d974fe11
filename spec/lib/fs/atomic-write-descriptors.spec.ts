/**
 * A write closes its descriptors in place (the temp file's once synced, the
 * directory's once its sync is back), and a read closes its own: after
 * writes that land, fail or are discarded, and reads that find a file or
 * none, no descriptor into the directory is left open. Linux only: the
 * open descriptors are read from /proc/self/fd.
 */
import { existsSync, mkdtempSync, readdirSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "@jest/globals";
import { stageFile, writeFileAtomically } from "../../../lib/fs/atomic-write.js";
import { AtomicJsonFile, TempFileAhead } from "../../../lib/state/atomic-json-adapter.js";

const dir = mkdtempSync(path.join(os.tmpdir(), "agui-descriptors-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The descriptors this process holds on `dir` or anything in it. */
function openInDir(): string[] {
  return readdirSync("/proc/self/fd").flatMap((fd) => {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      return target === dir || target.startsWith(`${dir}${path.sep}`) ? [target] : [];
    } catch {
      return [];
    }
  });
}

const onLinux = process.platform === "linux" ? describe : describe.skip;

onLinux("atomic writes and reads: descriptors", () => {
  it("leaves none open after writes that land, at once or staged ahead", async () => {
    await Promise.all(
      Array.from({ length: 10 }, (_, i) => writeFileAtomically(path.join(dir, `a${i}.json`), `{"i":${i}}`, { tempName: `~tmp-a${i}.tmp` })),
    );
    const ahead = new TempFileAhead(dir, Promise.resolve());
    await new AtomicJsonFile<{ i: number }>(path.join(dir, "b.json")).writeText('{"i":1}');
    await (await new AtomicJsonFile<{ i: number }>(path.join(dir, "c.json")).stageText('{"i":2}', ahead)).commit();
    expect(openInDir()).toEqual([]);
    expect(await new AtomicJsonFile<{ i: number }>(path.join(dir, "c.json")).read()).toEqual({ i: 2 });
  });

  it("leaves none open after a write that fails or is discarded, and removes only its own temp file", async () => {
    writeFileSync(path.join(dir, "~tmp-taken.tmp"), "someone else's");
    await expect(stageFile(path.join(dir, "d.json"), "{}", { tempName: "~tmp-taken.tmp" })).rejects.toThrow(/EEXIST/);
    const staged = await stageFile(path.join(dir, "e.json"), "{}", { tempName: "~tmp-e.tmp" });
    await staged.discard();
    await new TempFileAhead(dir, Promise.resolve()).discard();
    expect(openInDir()).toEqual([]);
    expect(existsSync(path.join(dir, "~tmp-taken.tmp"))).toBe(true);
    expect(existsSync(path.join(dir, "~tmp-e.tmp"))).toBe(false);
    expect(existsSync(path.join(dir, "e.json"))).toBe(false);
  });

  it("leaves none open after reads of a file, of none, and of a file it refuses", async () => {
    writeFileSync(path.join(dir, "f.json"), '{"f":true}');
    writeFileSync(path.join(dir, "g.json"), "[1]");
    expect(await new AtomicJsonFile(path.join(dir, "f.json")).read()).toEqual({ f: true });
    expect(await new AtomicJsonFile(path.join(dir, "missing.json")).read()).toBeNull();
    await expect(new AtomicJsonFile(path.join(dir, "g.json")).read()).rejects.toThrow(/JSON object/);
    expect(openInDir()).toEqual([]);
  });
});
