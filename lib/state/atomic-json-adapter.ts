/**
 * A lowdb `Adapter` for small JSON files that hold state worth protecting.
 *
 * lowdb's stock `JSONFile` writes through steno, which is not enough here:
 * - the file is created with the default mode (0666 minus umask, usually
 *   world-readable 0644), while thread state must be 0600;
 * - nothing is fsync'ed, neither the data nor the directory entry, so after
 *   a power loss the rename can survive while the data does not, leaving an
 *   empty or truncated file;
 * - its temp name is fixed (`.<name>.tmp`) and opened without O_EXCL or
 *   O_NOFOLLOW, so a symlink planted there redirects the write, and two
 *   writers share one temp file;
 * - reads follow symlinks.
 *
 * Here a write goes to a fresh, uniquely named temp file in the same
 * directory (O_CREAT|O_EXCL|O_NOFOLLOW, 0600), is fdatasync'ed, renamed over the
 * target (rename replaces a symlink at the target, it never writes through
 * it), and the directory is fsync'ed so the rename itself is durable. A read
 * refuses a symlink and anything that is not a regular file.
 *
 * On Windows O_NOFOLLOW does not exist and directories cannot be fsync'ed:
 * there the adapter is atomic but not hardened.
 */
import { constants, fstatSync, open, readFile } from "node:fs";
import { lstat, opendir, unlink } from "node:fs/promises";
import { closeQuietly, createTempFile, errno, NOFOLLOW, stageFile, type AtomicWriteOptions, type StagedFile } from "../fs/atomic-write.js";
import { randomBytes } from "node:crypto";
import path from "node:path";
import { promisify } from "node:util";
import type { Adapter } from "lowdb";

/**
 * The most a state file may hold, in bytes, one cap for both directions:
 * the reader refuses a bigger file (state files are small, so anything
 * bigger is not ours and is not read into memory), and the writer refuses
 * to write one, so whatever was written can be read back.
 */
export const MAX_JSON_FILE_BYTES = 4 * 1024 * 1024;

/**
 * A temp file younger than this may belong to a write in progress (possibly
 * in another process); only older ones are swept. A write that stalls longer
 * loses its temp file and fails, it never lands a partial file.
 */
export const STRAY_TEMP_AGE_MS = 60_000;

// A FIFO at the path would block an ordinary open forever; with O_NONBLOCK it opens and fstat rejects it.
const NONBLOCK = constants.O_NONBLOCK ?? 0;

// Callback `fs` on a plain descriptor, as promises: a new thread's admission misses twice, and a miss through
// `fs.promises` costs twice the CPU.
const openInPool = promisify(open);
const readFileInPool = promisify(readFile);

/**
 * Temp names end in `.tmp`, never `.json`, and contain `~`, which no raw
 * state stem does, so a temp file can never be read as state.
 */
const TEMP_NAME = /^~tmp-\d+-[0-9a-f]{16}\.tmp$/;

function tempName(): string {
  return `~tmp-${process.pid}-${randomBytes(8).toString("hex")}.tmp`;
}

export type JsonFileProblem = "symlink" | "not-regular" | "too-large" | "invalid-json" | "not-object" | "io";

/** What went wrong with the file, never what was in it. */
export class JsonFileError extends Error {
  override name = "JsonFileError";

  constructor(
    readonly problem: JsonFileProblem,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * The top level must be a JSON object. This also keeps lowdb's `Low.read`
 * honest: it ignores falsy data, so a file holding `null`, `0` or `false`
 * would otherwise pass for a missing file.
 */
export class AtomicJsonFile<T extends object> implements Adapter<T> {
  readonly #file: string;

  constructor(file: string) {
    this.#file = file;
  }

  async read(): Promise<T | null> {
    let fd: number;
    try {
      fd = await openInPool(this.#file, constants.O_RDONLY | NOFOLLOW | NONBLOCK);
    } catch (error) {
      if (errno(error) === "ENOENT") return null;
      // Linux says ELOOP for O_NOFOLLOW on a symlink, FreeBSD EMLINK.
      if (errno(error) === "ELOOP" || errno(error) === "EMLINK") throw new JsonFileError("symlink", "is a symbolic link", { cause: error });
      throw new JsonFileError("io", `cannot be opened (${errno(error) ?? "error"})`, { cause: error });
    }
    try {
      // The inode is in memory once opened: its stat is microseconds in place, not a trip to the pool.
      const stats = fstatSync(fd);
      if (!stats.isFile()) throw new JsonFileError("not-regular", "is not a regular file");
      if (stats.size > MAX_JSON_FILE_BYTES) throw new JsonFileError("too-large", `is larger than ${MAX_JSON_FILE_BYTES} bytes`);
      const bytes = await readFileInPool(fd);
      let data: unknown;
      try {
        // Fatal decoding: invalid UTF-8 is corruption, not something to paper over with U+FFFD.
        data = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
      } catch {
        // The parser's message quotes the text; it is deliberately dropped.
        throw new JsonFileError("invalid-json", "is not valid UTF-8 JSON");
      }
      if (data === null || typeof data !== "object" || Array.isArray(data))
        throw new JsonFileError("not-object", "does not hold a JSON object");
      return data as T;
    } catch (error) {
      if (error instanceof JsonFileError) throw error;
      throw new JsonFileError("io", `cannot be read (${errno(error) ?? "error"})`, { cause: error });
    } finally {
      // Read only: the close waits for nothing.
      closeQuietly(fd);
    }
  }

  /** Compact JSON, as a shared store keeps it: a document measures the same, whichever store holds it. */
  async write(data: T): Promise<void> {
    await this.writeText(JSON.stringify(data));
  }

  /** `text` as it is, which must be the JSON of an object (the reader refuses anything else). */
  async writeText(text: string): Promise<void> {
    const staged = await this.stageText(text);
    try {
      await staged.commit();
    } catch (error) {
      throw new JsonFileError("io", `cannot be written (${errno(error) ?? "error"})`, { cause: error });
    }
  }

  /**
   * `text` in a temp file beside the target, on disk, to be put in place by
   * its `commit` (or thrown away by `discard`): a writer that orders its
   * writes need only order the commits.
   */
  async stageText(text: string, ahead?: TempFileAhead): Promise<StagedFile> {
    // Measured on the very text written: a file the reader would refuse is never written.
    const bytes = Buffer.byteLength(text, "utf8");
    if (bytes > MAX_JSON_FILE_BYTES) {
      void ahead?.discard();
      throw new JsonFileError("too-large", `would be ${bytes} bytes, larger than ${MAX_JSON_FILE_BYTES} bytes`);
    }
    try {
      return await stageFile(this.#file, text, ahead?.takeFor(this.#file) ?? { tempName: tempName() });
    } catch (error) {
      throw new JsonFileError("io", `cannot be written (${errno(error) ?? "error"})`, { cause: error });
    }
  }
}

/**
 * A temp file created in `dir` before the write it is for knows its text
 * (see `ThreadStore.prepareWrite`), named as every temp file is, so a crash
 * leaves it to the sweep like any other. The write that takes it removes it
 * if it fails; left untaken, `discard` removes it.
 */
export class TempFileAhead {
  readonly #temp: string;
  #created: Promise<number> | undefined;
  #discarded: Promise<void> | undefined;

  constructor(
    private readonly dir: string,
    ready: Promise<void>,
  ) {
    const name = tempName();
    this.#temp = path.join(dir, name);
    this.#created = ready.then(() => createTempFile(this.#temp));
    // Its failure is the write's to tell (stageFile awaits it), or nobody's if it is discarded.
    this.#created.catch(() => undefined);
  }

  /** What `stageFile` is given for `file`, once: undefined if taken already or if `file` is in another directory. */
  takeFor(file: string): AtomicWriteOptions | undefined {
    const created = this.#created;
    if (created === undefined) return undefined;
    if (path.dirname(file) !== this.dir) {
      void this.discard();
      return undefined;
    }
    this.#created = undefined;
    return { tempName: path.basename(this.#temp), created };
  }

  /** Removes the file unless a write took it; settles once it is gone (the same promise however often it is called). */
  discard(): Promise<void> {
    const created = this.#created;
    this.#created = undefined;
    this.#discarded ??= created
      ? created
          .then(async (fd) => {
            closeQuietly(fd);
            await unlink(this.#temp);
          })
          .catch(() => undefined)
      : Promise.resolve();
    return this.#discarded;
  }
}

/**
 * Removes temp files left in `dir` by writes that never finished (a crash,
 * a kill). It lists the directory, so it is never on a request's path: the
 * store runs it in the background. Returns how many files it removed.
 */
export async function sweepStrayTempFiles(dir: string, olderThanMs = STRAY_TEMP_AGE_MS): Promise<number> {
  let removed = 0;
  const now = Date.now();
  for await (const entry of await opendir(dir)) {
    if (!entry.isFile() || !TEMP_NAME.test(entry.name)) continue;
    const file = path.join(dir, entry.name);
    try {
      if (now - (await lstat(file)).mtimeMs < olderThanMs) continue;
      await unlink(file);
      removed++;
    } catch (error) {
      if (errno(error) !== "ENOENT") throw error;
    }
  }
  return removed;
}
