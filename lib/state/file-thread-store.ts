/**
 * Thread state in one small JSON file per thread,
 * `<stateDir>/threads/<stem>.json` (R-PER-1, R-PER-2, wire contract §8).
 *
 * Nothing is scanned or cached: `load` opens the one file it is asked for,
 * each time, so admitting a request costs the same with 100,000 threads on
 * disk as with 10, and a corrupt file blocks only its own thread. lowdb
 * reads the document, over `AtomicJsonFile`, which also writes it, securely
 * and atomically, as the compact text the codec measured.
 */
import { chmod, lstat, mkdir, opendir } from "node:fs/promises";
import path from "node:path";
import { Low } from "lowdb";
import { AtomicJsonFile, JsonFileError, STRAY_TEMP_AGE_MS, sweepStrayTempFiles, TempFileAhead } from "./atomic-json-adapter.js";
import { checkSavable, documentAsState, documentText } from "./thread-state-codec.js";
import { threadFileStem } from "./thread-file-stem.js";
import { MAX_THREADS_SCANNED, newestFirst, summaryOf, type ThreadSummary } from "./thread-listing.js";
import type { ThreadState } from "./thread-state.js";
import { StatePersistenceError, StateUnavailableError, type SaveOptions, type ThreadLease, type ThreadStore } from "./thread-store.js";
import type { StagedFile } from "../fs/atomic-write.js";

export { threadFileStem } from "./thread-file-stem.js";

export interface FileThreadStoreOptions {
  stateDir: string;
}

const IS_WINDOWS = process.platform === "win32";

export class FileThreadStore implements ThreadStore {
  readonly stateDir: string;
  readonly threadsDir: string;
  /**
   * Leases live in this process only, which is right while one process owns
   * the state directory. Several instances share threads through the Redis
   * store instead (`redis-thread-store.ts`), whose leases expire unless renewed.
   */
  readonly #leases = new Map<string, number>();
  /** Fencing tokens only grow, so a released lease's token is never handed out again. */
  #lastToken = 0;
  /**
   * Saves of one thread put their files in place one after another, so the
   * last save called is the one on disk (a save given `after` counts as
   * called once that has settled).
   */
  readonly #saving = new Map<string, Promise<void>>();
  #directories: Promise<void> | undefined;
  #backgroundSweep: Promise<number> | undefined;

  constructor(options: FileThreadStoreOptions) {
    this.stateDir = path.resolve(options.stateDir);
    this.threadsDir = path.join(this.stateDir, "threads");
  }

  /** The file a thread's state lives in. */
  fileFor(threadId: string): string {
    return path.join(this.threadsDir, `${threadFileStem(threadId)}.json`);
  }

  async load(threadId: string): Promise<ThreadState | undefined> {
    const file = this.#fileOrFail(threadId, StateUnavailableError);
    const unavailable = (problem: string, cause?: unknown) =>
      new StateUnavailableError(`thread state ${path.basename(file)}: ${problem}`, cause === undefined ? undefined : { cause });
    // lowdb keeps its default data when the adapter finds no file; a unique object tells that case apart.
    const missing = {};
    const db = new Low<object>(new AtomicJsonFile<object>(file), missing);
    try {
      await db.read();
    } catch (error) {
      if (error instanceof JsonFileError) throw unavailable(error.message, error.problem === "io" ? error.cause : undefined);
      throw unavailable("cannot be read", error);
    }
    if (db.data === missing) return undefined;
    return documentAsState(db.data, threadId, path.basename(file));
  }

  /** The temp file of the thread's next save, created while the caller reads and checks (every thread's is in one directory). */
  prepareWrite(threadId: string): TempFileAhead | undefined {
    try {
      this.fileFor(threadId);
    } catch {
      return undefined;
    }
    this.#directories ??= this.#prepareDirectories();
    return new TempFileAhead(this.threadsDir, this.#directories);
  }

  async save(state: ThreadState, lease?: ThreadLease, { after, prepared, offLoop }: SaveOptions = {}): Promise<void> {
    const ahead = prepared instanceof TempFileAhead ? prepared : (prepared?.discard(), undefined);
    let file: string;
    let text: string;
    try {
      checkSavable(state);
      file = this.#fileOrFail(state.threadId, StatePersistenceError);
      // Measured and refused where every store measures it (`thread-state-codec.ts`), on the text written.
      text = documentText(state, path.basename(file));
      if (lease !== undefined) this.#checkHeld(lease, state.threadId, path.basename(file));
    } catch (error) {
      void ahead?.discard();
      throw error;
    }
    const { threadId } = state;

    // The temp file is written and synced at once, beside saves of the thread still going; only the renames go in turn.
    const staged = this.#stage(file, text, ahead);
    // Its failure is told in turn, below; meanwhile it is not an unhandled rejection.
    staged.catch(() => undefined);
    if (after !== undefined) {
      try {
        await after;
      } catch (error) {
        await staged.then(
          (temp) => temp.discard(),
          () => undefined,
        );
        throw error;
      }
    }
    const previous = this.#saving.get(threadId) ?? Promise.resolve();
    // Checked again in turn: a lease released while earlier saves were queued no longer writes.
    const current = previous
      .catch(() => undefined)
      .then(async () => {
        const temp = await staged;
        try {
          if (lease !== undefined) this.#checkHeld(lease, threadId, path.basename(file));
        } catch (error) {
          await temp.discard();
          throw error;
        }
        await this.#failedAs(file, () => temp.commit({ inPool: offLoop }));
      });
    this.#saving.set(threadId, current);
    try {
      await current;
    } finally {
      if (this.#saving.get(threadId) === current) this.#saving.delete(threadId);
    }
    this.#sweepOnce();
  }

  async tryAcquire(threadId: string): Promise<ThreadLease | undefined> {
    // A thread that can have no file can have no run either.
    this.#fileOrFail(threadId, StateUnavailableError);
    if (this.#leases.has(threadId)) return undefined;
    const token = ++this.#lastToken;
    this.#leases.set(threadId, token);
    const leases = this.#leases;
    return Object.freeze({
      threadId,
      token,
      // Only the holder's own entry is removed: a late second release cannot free a lease taken since.
      release: async () => {
        if (leases.get(threadId) === token) leases.delete(threadId);
      },
    });
  }

  /**
   * The newest thread files by modification time, the only listing that
   * reads the directory: it is for a person's list of threads, never on a
   * run's path. A file that is not a readable state of the thread it is
   * named for is left out.
   */
  async listThreads(limit: number): Promise<ThreadSummary[]> {
    const files: Array<{ name: string; updatedAt: number }> = [];
    try {
      for await (const entry of await opendir(this.threadsDir)) {
        if (files.length >= MAX_THREADS_SCANNED) break;
        if (!entry.isFile() || !entry.name.endsWith(".json")) continue;
        const updatedAt = await lstat(path.join(this.threadsDir, entry.name)).then(
          (stats) => stats.mtimeMs,
          () => undefined,
        );
        if (updatedAt !== undefined) files.push({ name: entry.name, updatedAt: Math.round(updatedAt) });
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw new StateUnavailableError(`thread state directory: cannot be listed`, { cause: error });
    }
    const summaries: ThreadSummary[] = [];
    for (const { name, updatedAt } of newestFirst(files, limit)) {
      const state = await this.#stateIn(name);
      if (state) summaries.push(summaryOf(state, updatedAt, this.#leases.has(state.threadId)));
    }
    return summaries;
  }

  /** The state a thread file holds, when it is a valid one of the thread its name is made from. */
  async #stateIn(name: string): Promise<ThreadState | undefined> {
    try {
      const data = await new AtomicJsonFile<{ threadId?: unknown }>(path.join(this.threadsDir, name)).read();
      const threadId = data?.threadId;
      if (typeof threadId !== "string" || `${threadFileStem(threadId)}.json` !== name) return undefined;
      return documentAsState(data, threadId, name);
    } catch {
      return undefined;
    }
  }

  /** A save under a lease that no longer holds its thread is refused, as the shared store refuses it. */
  #checkHeld(lease: ThreadLease, threadId: string, where: string): void {
    if (lease.threadId !== threadId || this.#leases.get(threadId) !== lease.token)
      throw new StatePersistenceError(`thread state ${where}: refused, the lease it was written under no longer holds the thread`);
  }

  /**
   * Removes temp files of writes that never finished (older than
   * `olderThanMs`). Runs by itself once, in the background, after the first
   * save of this store, that is after a restart, which is when a crash
   * leaves them. They are harmless meanwhile: nothing reads them.
   */
  async sweepStrayTempFiles(olderThanMs = STRAY_TEMP_AGE_MS): Promise<number> {
    try {
      return await sweepStrayTempFiles(this.threadsDir, olderThanMs);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return 0;
      throw error;
    }
  }

  /** The sweep started by the first save (resolves to -1 if it failed): something to await on shutdown or in a test. */
  get backgroundSweep(): Promise<number> | undefined {
    return this.#backgroundSweep;
  }

  #sweepOnce(): void {
    // Best effort: a failed sweep only leaves unread files behind.
    this.#backgroundSweep ??= this.sweepStrayTempFiles().catch(() => -1);
  }

  /** An id without a file name (see threadFileStem) fails as the operation's own error type. */
  #fileOrFail(threadId: string, Failure: new (message: string) => Error): string {
    try {
      return this.fileFor(threadId);
    } catch (error) {
      throw new Failure(`thread state: ${(error as Error).message}`);
    }
  }

  async #stage(file: string, text: string, ahead: TempFileAhead | undefined): Promise<StagedFile> {
    return this.#failedAs(file, async () => {
      this.#directories ??= this.#prepareDirectories();
      await this.#directories;
      return new AtomicJsonFile<ThreadState>(file).stageText(text, ahead);
    });
  }

  /** `write`'s failure as the store's own error. */
  async #failedAs<T>(file: string, write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (error) {
      // The directories are checked again next time: they may have been removed or fixed meanwhile.
      this.#directories = undefined;
      if (error instanceof StatePersistenceError) throw error;
      const problem = error instanceof JsonFileError ? error.message : "cannot be written";
      throw new StatePersistenceError(`thread state ${path.basename(file)}: ${problem}`, { cause: error });
    }
  }

  /**
   * Directories this store creates are 0700 (the missing state dir and its
   * missing parents, and `threads`). An existing `threads` that is open to
   * group or others is tightened rather than refused: an older install or a
   * loose umask should not stop the service. An existing state dir is left
   * as the operator made it: it may be a shared or symlinked location (a
   * volume, even /tmp), and chmod'ing that would break other users of it;
   * the 0700 `threads` and 0600 files inside protect the state either way.
   * `threads` is ours and must be a real directory, not a symlink.
   */
  async #prepareDirectories(): Promise<void> {
    await mkdir(this.threadsDir, { recursive: true, mode: 0o700 });
    const threads = await lstat(this.threadsDir);
    if (!threads.isDirectory())
      throw new StatePersistenceError(`thread state directory ${this.threadsDir} is not a directory (a symlink is refused)`);
    if (!IS_WINDOWS && (threads.mode & 0o077) !== 0) await chmod(this.threadsDir, threads.mode & 0o700);
  }
}
