/**
 * Threads an earlier version left in its default state directory
 * (`~/.config/agui`, before the default became the reference's
 * `~/.iac-code/agui`): at start, each thread file there that the state
 * directory lacks is copied in, so a service upgraded in place still has
 * every thread. Only when the state directory is the default one: a
 * directory an operator chose is theirs. Copied, not moved, and never over
 * a file: the old directory stays as it was, for a version rolled back.
 */
import { constants } from "node:fs";
import { copyFile, mkdir, readdir } from "node:fs/promises";
import path from "node:path";

export interface AdoptedThreads {
  /** How many thread files were copied in. */
  copied: number;
  from: string;
}

/** Copies the `threads/*.json` of `legacyDir` that `stateDir` lacks; undefined when there was nothing to copy. */
export async function adoptLegacyThreads(stateDir: string, legacyDir: string): Promise<AdoptedThreads | undefined> {
  if (path.resolve(stateDir) === path.resolve(legacyDir)) return undefined;
  const from = path.join(legacyDir, "threads");
  let names: string[];
  try {
    names = (await readdir(from, { withFileTypes: true }))
      .filter((entry) => entry.isFile() && entry.name.endsWith(".json"))
      .map((entry) => entry.name);
  } catch {
    return undefined;
  }
  if (names.length === 0) return undefined;
  const to = path.join(stateDir, "threads");
  await mkdir(to, { recursive: true, mode: 0o700 });
  let copied = 0;
  for (const name of names) {
    try {
      await copyFile(path.join(from, name), path.join(to, name), constants.COPYFILE_EXCL);
      copied++;
    } catch (error) {
      // Already there: the state directory's own file is the newer one.
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
  }
  return copied === 0 ? undefined : { copied, from };
}
