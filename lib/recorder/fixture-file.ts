/**
 * The recorder's files: their names, and how they are written. A recording
 * is only ever replaced whole: each write goes to a fresh temp file in the
 * same directory (O_EXCL, O_NOFOLLOW, mode 0600), is fsync'ed, then renamed
 * over the recording, and the directory is fsync'ed. A crash at any moment
 * leaves either the previous version or the new one, never a torn line or
 * a turn marker without its lines, and the temp file it may leave behind is
 * not a fixture (its name does not end in `.jsonl`, so the kernel never
 * lists it).
 */
import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { mkdir, open, readdir, type FileHandle } from "node:fs/promises";
import path from "node:path";
import { errno, NOFOLLOW, writeFileAtomically } from "../fs/atomic-write.js";
import { FIXTURE_EXTENSION, parseFixture } from "../fixtures/fixture-format.js";

/** A recording is a fixture: the demo kernel lists and replays it as it is. */
export const RECORDING_EXTENSION = FIXTURE_EXTENSION;

/** Creates the recording directory (and its missing parents) 0700; an existing directory is left as it is. */
export async function ensureRecordDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
}

/**
 * The short form of a task id in a file name: its first 8 letters and
 * digits. Fixture names allow only `[A-Za-z0-9_-]`, and the name doubles as
 * what a user types to replay it.
 */
export function shortId(taskId: string | undefined): string {
  const short = (taskId ?? "").replace(/[^A-Za-z0-9]/g, "").slice(0, 8);
  return short === "" ? `x${randomBytes(4).toString("hex")}` : short;
}

/**
 * `20250314-093012-1a2b3c4d-permission-deploy-the-vpc`: the UTC time the
 * task's first run started, the short task id, then what the run was
 * (`recording-slug.ts`), when there is anything to say.
 */
export function recordingName(startedAt: Date, taskId: string | undefined, slug = ""): string {
  const iso = startedAt.toISOString(); // 2025-03-14T09:30:12.345Z
  const stamp = `${iso.slice(0, 10).replaceAll("-", "")}-${iso.slice(11, 19).replaceAll(":", "")}`;
  return slug === "" ? `${stamp}-${shortId(taskId)}` : `${stamp}-${shortId(taskId)}-${slug}`;
}

/** A name not taken in `dir` yet: `name`, else `name-2`, `name-3`, … */
export async function freeName(dir: string, name: string): Promise<string> {
  const taken = new Set(await readdir(dir).catch(() => [] as string[]));
  let candidate = name;
  for (let n = 2; taken.has(candidate + RECORDING_EXTENSION); n++) candidate = `${name}-${n}`;
  return candidate;
}

/**
 * The newest recording of a task in `dir`, found by its short id; for a
 * task whose earlier turns were recorded before the service restarted.
 */
export async function findRecording(dir: string, taskId: string): Promise<string | undefined> {
  const short = shortId(taskId);
  // After the short id: a slug (`[a-z0-9-]`), a `-N` of a taken name, or both.
  const pattern = new RegExp(`^\\d{8}-\\d{6}-${short}(?:-[a-z0-9-]+)?\\${RECORDING_EXTENSION}$`);
  const names = (await readdir(dir).catch(() => [] as string[])).filter((name) => pattern.test(name)).sort();
  const newest = names.at(-1);
  return newest === undefined ? undefined : path.join(dir, newest);
}

/** The text of a recording; undefined when there is none. Never follows a symlink. */
export async function readRecording(file: string): Promise<string | undefined> {
  let handle: FileHandle;
  try {
    handle = await open(file, constants.O_RDONLY | NOFOLLOW);
  } catch (error) {
    if (errno(error) === "ENOENT") return undefined;
    throw error;
  }
  try {
    return await handle.readFile("utf8");
  } finally {
    await handle.close();
  }
}

/**
 * The last turn a recording holds, or undefined when its text is not a
 * fixture the kernel can read (edited by hand, say): the recorder then
 * starts a new file rather than append to it.
 */
export function lastTurn(text: string): number | undefined {
  try {
    const sections = parseFixture(text);
    return sections.length === 0 ? undefined : Math.max(...sections.map((section) => section.turn));
  } catch {
    return undefined;
  }
}

/** Temp names start with `.` and end in `.tmp`: hidden, and never a fixture. */
const tempName = (file: string) => `.${path.basename(file)}.${process.pid}-${randomBytes(6).toString("hex")}.tmp`;

export interface WriteHooks {
  /**
   * Tests: runs once the temp file is complete and synced, before the rename.
   * Holding it open (or throwing) is a crash at the one moment two versions exist.
   */
  beforeRename?: (tempFile: string) => Promise<void>;
}

/** Replaces `file` with `text`, atomically, mode 0600. */
export function writeAtomically(file: string, text: string, hooks: WriteHooks = {}): Promise<void> {
  return writeFileAtomically(file, text, { tempName: tempName(file), ...hooks });
}
