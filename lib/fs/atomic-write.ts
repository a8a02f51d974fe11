/**
 * Replacing a small file so that a crash at any moment leaves either the old
 * version or the new one, never a torn file: a temp file in the same
 * directory (O_CREAT|O_EXCL|O_NOFOLLOW, mode exactly 0600) is written,
 * fsync'ed, renamed over the target, and the directory is fsync'ed so the
 * rename itself survives a power loss. `rename` replaces a symlink at the
 * target rather than writing through it. On Windows O_NOFOLLOW does not
 * exist and directories cannot be fsync'ed; both steps are skipped there.
 * Used by the thread store and the recorder.
 */
import { constants } from "node:fs";
import { open, rename, unlink, type FileHandle } from "node:fs/promises";
import path from "node:path";

export const IS_WINDOWS = process.platform === "win32";
export const NOFOLLOW = constants.O_NOFOLLOW ?? 0;

export const errno = (error: unknown): string | undefined => (error as NodeJS.ErrnoException | undefined)?.code;

async function fsyncDirectory(dir: string): Promise<void> {
  if (IS_WINDOWS) return;
  const handle = await open(dir, constants.O_RDONLY);
  try {
    await handle.sync();
  } catch (error) {
    // Some file systems cannot fsync a directory; the rename is still atomic there.
    if (errno(error) !== "EINVAL" && errno(error) !== "ENOTSUP") throw error;
  } finally {
    await handle.close();
  }
}

export interface AtomicWriteOptions {
  /** The temp file's name in the target's directory; callers pick one their readers never take for data. */
  tempName: string;
  /** Tests: runs once the temp file is complete and synced, before the rename (a crash at the one moment two versions exist). */
  beforeRename?: (tempFile: string) => Promise<void>;
}

/** Replaces `file` with `text`, atomically, mode 0600. */
export async function writeFileAtomically(file: string, text: string, { tempName, beforeRename }: AtomicWriteOptions): Promise<void> {
  const dir = path.dirname(file);
  const temp = path.join(dir, tempName);
  let handle: FileHandle | undefined;
  let created = false;
  try {
    handle = await open(temp, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY | NOFOLLOW, 0o600);
    created = true;
    // The umask can only remove bits; this makes the mode exactly 0600.
    if (!IS_WINDOWS) await handle.chmod(0o600);
    await handle.writeFile(text, "utf8");
    await handle.sync();
    await handle.close();
    handle = undefined;
    await beforeRename?.(temp);
    await rename(temp, file);
    created = false;
    await fsyncDirectory(dir);
  } catch (error) {
    await handle?.close().catch(() => undefined);
    // Only a temp file this call created is removed: after EEXIST the name belongs to someone else.
    if (created) await unlink(temp).catch(() => undefined);
    throw error;
  }
}
