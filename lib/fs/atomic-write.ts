/**
 * Replacing a small file so that a crash at any moment leaves either the old
 * version or the new one, never a torn file: a temp file in the same
 * directory (O_CREAT|O_EXCL|O_NOFOLLOW, mode exactly 0600) is written,
 * fdatasync'ed, renamed over the target, and the directory is fsync'ed so
 * the rename itself survives a power loss. `rename` replaces a symlink at the
 * target rather than writing through it. On Windows O_NOFOLLOW does not
 * exist and directories cannot be fsync'ed; both steps are skipped there.
 * Used by the thread store and the recorder.
 *
 * A write is two stages, so that a caller who must order its writes (the
 * thread store, one thread's saves) orders only the second: `stageFile`
 * (the temp file, complete and on disk) may run while an earlier write of
 * the same file is still going, `commit` (the rename and the directory's
 * sync) runs in turn. Each stage is as few trips to the thread pool as it
 * can be: a run's first event waits on them, and on a busy event loop each
 * trip waits for its turn and costs the process CPU. What only touches the
 * page cache or in-memory inodes (the temp file's mode and text, its close
 * once synced, the rename within one directory, the directory's open and
 * close) is done in place; what waits for the disk (the syncs) or may wait
 * on a lookup (the temp file's creation) goes to the pool. A write nothing
 * waits on but its own caller may ask for the rename in the pool too
 * (`commit`'s `inPool`): a rename can wait on the file system's other
 * work. The calls are `node:fs`'s callback ones on plain descriptors:
 * `fs.promises` makes a FileHandle per open and costs about twice the CPU
 * per call.
 */
import { closeSync, constants, fchmodSync, fdatasync, fsync, open, openSync, rename, renameSync, unlink, writeFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";

export const IS_WINDOWS = process.platform === "win32";
export const NOFOLLOW = constants.O_NOFOLLOW ?? 0;

export const errno = (error: unknown): string | undefined => (error as NodeJS.ErrnoException | undefined)?.code;

// The callback calls, as promises: each is one trip to the thread pool (see the top of this file).
const openInPool = promisify(open);
const fdatasyncInPool = promisify(fdatasync);
const fsyncInPool = promisify(fsync);
const renameInPool = promisify(rename);
const unlinkInPool = promisify(unlink);

/** Closes a descriptor nothing more is read from or written to; a failure there can lose nothing. */
export function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // Nothing to do: the descriptor is gone either way (EBADF, EIO after the data's sync).
  }
}

/** Removes a temp file this process created; gone already is fine. */
const unlinkQuietly = (file: string): Promise<void> => unlinkInPool(file).catch(() => undefined);

async function fsyncDirectory(dir: string): Promise<void> {
  // A directory is opened for its sync alone: a lookup of a directory just written to, in the dentry cache.
  const fd = openSync(dir, constants.O_RDONLY);
  try {
    await fsyncInPool(fd);
  } catch (error) {
    // Some file systems cannot fsync a directory; the rename is still atomic there.
    if (errno(error) !== "EINVAL" && errno(error) !== "ENOTSUP") throw error;
  } finally {
    closeQuietly(fd);
  }
}

/** Per directory: the sync in progress, and the one queued behind it. */
const directorySyncs = new Map<string, { running: Promise<void>; next?: Promise<void> }>();

/**
 * Resolves once a sync of `dir` that began after this call has completed,
 * so every rename done before the call is durable. Callers that come while
 * a sync runs share the one queued behind it: many threads' saves at once
 * cost one directory sync per round, not one each.
 */
export function syncDirectory(dir: string): Promise<void> {
  if (IS_WINDOWS) return Promise.resolve();
  const syncs = directorySyncs.get(dir);
  if (syncs === undefined) return startSync(dir);
  syncs.next ??= syncs.running.catch(() => undefined).then(() => startSync(dir));
  return syncs.next;
}

function startSync(dir: string): Promise<void> {
  const running = fsyncDirectory(dir).finally(() => {
    if (directorySyncs.get(dir)?.running === running) directorySyncs.delete(dir);
  });
  directorySyncs.set(dir, { running });
  return running;
}

export interface AtomicWriteOptions {
  /** The temp file's name in the target's directory; callers pick one their readers never take for data. */
  tempName: string;
  /** That temp file's descriptor, created already (`createTempFile`) while the caller had other work to wait for. */
  created?: Promise<number>;
  /** Tests: runs once the temp file is complete and synced, before the rename (a crash at the one moment two versions exist). */
  beforeRename?: (tempFile: string) => Promise<void>;
}

/** A temp file holding the new version, on disk, not yet in place. */
export interface StagedFile {
  readonly temp: string;
  /**
   * Renames it over the target and syncs the directory; the target has the new version, durably, once this
   * resolves. `inPool`: the rename goes to the thread pool too (see `commit` in `stageFile`).
   */
  commit(options?: { inPool?: boolean }): Promise<void>;
  /** Removes it instead (a write that must not land after all). */
  discard(): Promise<void>;
}

/**
 * A new temp file (O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600) for `stageFile` to
 * write: created ahead, its trip to the thread pool is off the write's way.
 */
export const createTempFile = (temp: string): Promise<number> =>
  openInPool(temp, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY | NOFOLLOW, 0o600);

/** Writes `text` to a new temp file beside `file`, mode 0600, and syncs it; nothing replaces `file` yet. */
export async function stageFile(file: string, text: string, { tempName, beforeRename, created }: AtomicWriteOptions): Promise<StagedFile> {
  const dir = path.dirname(file);
  const temp = path.join(dir, tempName);
  const fd = await (created ?? createTempFile(temp));
  // Only a temp file this call created is removed: after EEXIST the name belongs to someone else.
  const discard = () => unlinkQuietly(temp);
  try {
    // The umask can only remove bits; the chmod makes the mode exactly 0600. Both go to the page cache at once,
    // microseconds for a thread's state, where a trip to the thread pool waits for the event loop's next turn.
    if (!IS_WINDOWS) fchmodSync(fd, 0o600);
    writeFileSync(fd, text, "utf8");
    // The data and the size that reads need; the file's times are not worth a journal commit.
    await fdatasyncInPool(fd);
  } catch (error) {
    closeQuietly(fd);
    await discard();
    throw error;
  }
  // The data is on disk, so the close waits for nothing (and Windows cannot rename an open file).
  closeQuietly(fd);
  const commit = async ({ inPool = false }: { inPool?: boolean } = {}) => {
    try {
      await beforeRename?.(temp);
      // In place, in the turn the data's sync came back in: a rename within one directory is most often tens of
      // microseconds of metadata (the directory's sync below is what waits for the disk), where a trip to the
      // thread pool waits for a turn of the event loop, on the way to a run's first event (a pool rename for
      // every write made the first text delta 1.28× as late, 14 rounds by turns on a loaded machine). But the
      // rename waits for the file system's journal while other syncs commit it: under the peer bench's 100
      // streams, 45 % of the run ends' renames held the loop over 0.2 ms (up to 5 ms), and every stream's
      // deltas with it. A write nothing waits on but its own run's end asks for the pool (`inPool`).
      if (IS_WINDOWS || inPool) await renameInPool(temp, file);
      else renameSync(temp, file);
    } catch (error) {
      await discard();
      throw error;
    }
    await syncDirectory(dir);
  };
  return { temp, commit, discard };
}

/** Replaces `file` with `text`, atomically, mode 0600. */
export async function writeFileAtomically(file: string, text: string, options: AtomicWriteOptions): Promise<void> {
  await (await stageFile(file, text, options)).commit();
}
