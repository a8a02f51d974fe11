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
 * trip waits for its turn. What only fills the page cache (the temp file's
 * mode and text, the rename within one directory) is done in place; what
 * waits for the disk (the syncs) or may wait on a lookup (opens) goes to the
 * pool, the directory's open beside the temp file's write.
 */
import { constants, fchmodSync, renameSync, writeFileSync } from "node:fs";
import { open, rename, unlink, type FileHandle } from "node:fs/promises";
import path from "node:path";

export const IS_WINDOWS = process.platform === "win32";
export const NOFOLLOW = constants.O_NOFOLLOW ?? 0;

export const errno = (error: unknown): string | undefined => (error as NodeJS.ErrnoException | undefined)?.code;

const openDirectory = (dir: string): Promise<FileHandle> => open(dir, constants.O_RDONLY);

/** Closes a directory handle nothing waits on. */
const closeQuietly = (handle: Promise<FileHandle>) =>
  void handle.then(
    (opened) => opened.close().catch(() => undefined),
    () => undefined,
  );

async function fsyncDirectory(dir: string, opening: Promise<FileHandle> = openDirectory(dir)): Promise<void> {
  const handle = await opening;
  try {
    await handle.sync();
  } catch (error) {
    // Some file systems cannot fsync a directory; the rename is still atomic there.
    if (errno(error) !== "EINVAL" && errno(error) !== "ENOTSUP") throw error;
  } finally {
    // Nothing waits on the close: the sync is what makes the renames durable.
    void handle.close().catch(() => undefined);
  }
}

/** Per directory: the sync in progress, and the one queued behind it. */
const directorySyncs = new Map<string, { running: Promise<void>; next?: Promise<void> }>();

/**
 * Whether a sync of `dir` is queued behind the running one: a rename done
 * now shares that queued sync, or queues one after it that opens the
 * directory itself, so opening it ahead would only be closed unused.
 */
const syncQueued = (dir: string): boolean => directorySyncs.get(dir)?.next !== undefined;

/**
 * Resolves once a sync of `dir` that began after this call has completed,
 * so every rename done before the call is durable. Callers that come while
 * a sync runs share the one queued behind it: many threads' saves at once
 * cost one directory sync per round, not one each.
 */
export function syncDirectory(dir: string, opening?: Promise<FileHandle>): Promise<void> {
  if (IS_WINDOWS) return Promise.resolve();
  const syncs = directorySyncs.get(dir);
  if (syncs === undefined) return startSync(dir, opening);
  // The sync queued now takes this call's handle; one queued already has its own (or opens it itself).
  if (syncs.next === undefined) syncs.next = syncs.running.catch(() => undefined).then(() => startSync(dir, opening));
  else if (opening) closeQuietly(opening);
  return syncs.next;
}

function startSync(dir: string, opening?: Promise<FileHandle>): Promise<void> {
  const running = fsyncDirectory(dir, opening).finally(() => {
    if (directorySyncs.get(dir)?.running === running) directorySyncs.delete(dir);
  });
  directorySyncs.set(dir, { running });
  return running;
}

export interface AtomicWriteOptions {
  /** The temp file's name in the target's directory; callers pick one their readers never take for data. */
  tempName: string;
  /** That temp file, created already (`createTempFile`) while the caller had other work to wait for. */
  created?: Promise<FileHandle>;
  /** Tests: runs once the temp file is complete and synced, before the rename (a crash at the one moment two versions exist). */
  beforeRename?: (tempFile: string) => Promise<void>;
}

/** A temp file holding the new version, on disk, not yet in place. */
export interface StagedFile {
  readonly temp: string;
  /** Renames it over the target and syncs the directory; the target has the new version, durably, once this resolves. */
  commit(): Promise<void>;
  /** Removes it instead (a write that must not land after all). */
  discard(): Promise<void>;
}

/**
 * A new temp file (O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600) for `stageFile` to
 * write: created ahead, its trip to the thread pool is off the write's way.
 */
export const createTempFile = (temp: string): Promise<FileHandle> =>
  open(temp, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY | NOFOLLOW, 0o600);

/** Writes `text` to a new temp file beside `file`, mode 0600, and syncs it; nothing replaces `file` yet. */
export async function stageFile(file: string, text: string, { tempName, beforeRename, created }: AtomicWriteOptions): Promise<StagedFile> {
  const dir = path.dirname(file);
  const temp = path.join(dir, tempName);
  // Opened while the temp file is written and synced, so the commit's directory sync follows its rename at once.
  // A directory's fsync covers the entries it holds when it runs, whenever its handle was opened. Under many
  // saves at once, most renames share a sync already queued (`syncDirectory`): theirs would be two trips for nothing.
  const directory = IS_WINDOWS || syncQueued(dir) ? undefined : openDirectory(dir);
  // Its failure is told by the sync in `commit`; meanwhile it is not an unhandled rejection.
  directory?.catch(() => undefined);
  const closeDirectory = () => directory && closeQuietly(directory);
  let handle: FileHandle;
  try {
    handle = await (created ?? createTempFile(temp));
  } catch (error) {
    closeDirectory();
    throw error;
  }
  // Only a temp file this call created is removed: after EEXIST the name belongs to someone else.
  const discard = () => unlink(temp).catch(() => undefined);
  try {
    // The umask can only remove bits; the chmod makes the mode exactly 0600. Both go to the page cache at once,
    // microseconds for a thread's state, where a trip to the thread pool waits for the event loop's next turn.
    if (!IS_WINDOWS) fchmodSync(handle.fd, 0o600);
    writeFileSync(handle.fd, text, "utf8");
    // The data and the size that reads need; the file's times are not worth a journal commit.
    await handle.datasync();
  } catch (error) {
    closeDirectory();
    await handle.close().catch(() => undefined);
    await discard();
    throw error;
  }
  // The data is on disk: a failing close can lose nothing, so it is not waited for where it need not be.
  const closed = handle.close().catch(() => undefined);
  const commit = async () => {
    try {
      // Windows cannot rename an open file; elsewhere the rename need not wait for the close.
      if (IS_WINDOWS || beforeRename) await closed;
      await beforeRename?.(temp);
      // In place, in the turn the data's sync came back in: a rename within one directory is microseconds of
      // metadata in the page cache (the directory's sync below is what waits for the disk), where a trip to the
      // thread pool waits for a turn of the event loop, on the way to a run's first event.
      if (IS_WINDOWS) await rename(temp, file);
      else renameSync(temp, file);
    } catch (error) {
      closeDirectory();
      await discard();
      throw error;
    }
    await syncDirectory(dir, directory);
  };
  return {
    temp,
    commit,
    discard: async () => {
      closeDirectory();
      await closed;
      await discard();
    },
  };
}

/** Replaces `file` with `text`, atomically, mode 0600. */
export async function writeFileAtomically(file: string, text: string, options: AtomicWriteOptions): Promise<void> {
  await (await stageFile(file, text, options)).commit();
}
