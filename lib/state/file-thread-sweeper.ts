/**
 * Retention for the file store: removes the files of threads idle longer
 * than `IAC_CODE_AGUI_THREAD_RETENTION_S` (see `thread-retention.ts`).
 * Idle means unsaved: a file's mtime is its last save, since every save
 * renames a fresh file into place.
 *
 * Each sweep looks at a bounded number of directory entries and the next
 * one goes on where it stopped, so 100,000 threads cost many small sweeps,
 * never one long one. A thread is removed only under its own lease, taken
 * as a run would take it: one with a run is skipped, and no run can start
 * on it while its file goes. Its state is then read back and checked
 * again, so a save since the first look or a pending interrupt that has
 * not expired keeps it.
 */
import type { Dir } from "node:fs";
import { opendir, readFile, stat, unlink } from "node:fs/promises";
import path from "node:path";
import { silentLogger, type Logger } from "../log.js";
import type { FileThreadStore } from "./file-thread-store.js";
import { keptUntilMs } from "./thread-retention.js";

/** Entries looked at per sweep: a few milliseconds of `stat`s. */
export const DEFAULT_SWEEP_BATCH = 1000;
/** The longest wait between sweeps; a short retention is swept more often (a quarter of it). */
export const MAX_SWEEP_INTERVAL_MS = 10 * 60 * 1000;

export interface FileThreadSweeperOptions {
  store: FileThreadStore;
  /** How long a thread may stay unsaved, in ms; at most 0 removes nothing. */
  retentionMs: number;
  /** Tests: the clock idleness is measured with (default `Date.now`). */
  now?: () => number;
  batchSize?: number;
  /** Told how many threads a sweep removed, when it removed any (the metrics). */
  onRemoved?: (count: number) => void;
  log?: Logger;
}

export class FileThreadSweeper {
  readonly #options: FileThreadSweeperOptions;
  readonly #now: () => number;
  readonly #log: Logger;
  /** Where the last sweep stopped in the directory; undefined between passes. */
  #directory: Dir | undefined;
  #sweeping: Promise<number> | undefined;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: FileThreadSweeperOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#log = options.log ?? silentLogger;
  }

  /** Sweeps now and then until `stop`; the timer never keeps the process alive. */
  start(): void {
    if (this.#options.retentionMs <= 0 || this.#timer !== undefined) return;
    const everyMs = Math.max(1000, Math.min(MAX_SWEEP_INTERVAL_MS, Math.floor(this.#options.retentionMs / 4)));
    this.#timer = setInterval(() => void this.sweep(), everyMs);
    this.#timer.unref();
  }

  /** Stops the timer, waits for a sweep under way and closes the directory. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#sweeping;
    await this.#closeDirectory();
  }

  /** One bounded sweep (one at a time): the number of threads it removed. Never throws. */
  sweep(): Promise<number> {
    this.#sweeping ??= this.#sweep()
      .catch((error: unknown) => {
        this.#log.warn({ err: error }, "a thread retention sweep failed; the next one tries again");
        return 0;
      })
      .finally(() => (this.#sweeping = undefined));
    return this.#sweeping;
  }

  async #sweep(): Promise<number> {
    const { store, retentionMs, batchSize = DEFAULT_SWEEP_BATCH } = this.#options;
    if (retentionMs <= 0) return 0;
    let removed = 0;
    for (let looked = 0; looked < batchSize; looked++) {
      const entry = await this.#nextEntry(store.threadsDir);
      if (entry === undefined) break;
      if (!entry.isFile() || !entry.name.endsWith(".json")) continue;
      try {
        if (await this.#removeIfIdle(path.join(store.threadsDir, entry.name))) removed++;
      } catch (error) {
        // One file that cannot be read or removed stops nothing else; it is looked at again next pass.
        this.#log.warn({ err: error, file: entry.name }, "a thread's file could not be checked for retention");
      }
    }
    if (removed > 0) {
      this.#options.onRemoved?.(removed);
      this.#log.info({ removed }, `removed ${removed} thread(s) idle longer than the retention`);
    }
    return removed;
  }

  /** The next entry of the directory, starting a new pass after the last; undefined at the end of a pass. */
  async #nextEntry(dir: string) {
    if (this.#directory === undefined) {
      try {
        this.#directory = await opendir(dir);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
        throw error;
      }
    }
    const entry = await this.#directory.read();
    if (entry === null) await this.#closeDirectory();
    return entry ?? undefined;
  }

  async #closeDirectory(): Promise<void> {
    const directory = this.#directory;
    this.#directory = undefined;
    await directory?.close().catch(() => undefined);
  }

  async #removeIfIdle(file: string): Promise<boolean> {
    const { store, retentionMs } = this.#options;
    // The cheap look first: most files were saved within the retention.
    if (!this.#idle((await stat(file)).mtimeMs)) return false;
    const threadId = await threadIdIn(file);
    // A file that names another thread, or none, is not this sweep's to judge.
    if (threadId === undefined || store.fileFor(threadId) !== file) return false;
    const lease = await store.tryAcquire(threadId);
    if (lease === undefined) return false;
    try {
      const state = await store.load(threadId);
      if (state === undefined) return false;
      const savedAtMs = (await stat(file)).mtimeMs;
      if (this.#now() < keptUntilMs(state, savedAtMs, retentionMs)) return false;
      await unlink(file);
      return true;
    } finally {
      await lease.release();
    }
  }

  #idle(savedAtMs: number): boolean {
    return this.#now() - savedAtMs >= this.#options.retentionMs;
  }
}

/** The thread id a state file says it belongs to, if it says one; the store's load checks the rest. */
async function threadIdIn(file: string): Promise<string | undefined> {
  try {
    const document = JSON.parse(await readFile(file, "utf8")) as { threadId?: unknown } | null;
    return typeof document?.threadId === "string" ? document.threadId : undefined;
  } catch {
    return undefined;
  }
}
