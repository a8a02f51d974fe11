/**
 * The workspace a request names (`forwardedProps.iacCode.cwd`), as the
 * kernel will find it: inside an allowed root, reached without /proc, a
 * directory or nothing yet; and when two paths name the same workspace
 * (a thread is bound to one). Validation turns what is wrong here into
 * its error; the service's start checks `IAC_CODE_AGUI_DEFAULT_CWD` here.
 */
import { lstatSync, readlinkSync, realpathSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { DEFAULT_LANGUAGE, translate } from "./i18n/index.js";

/** Relative-path containment, so `/tmpx` is not inside `/tmp` and Windows compares case-insensitively. */
function isWithin(candidate: string, root: string): boolean {
  const relative = path.relative(root, candidate);
  return relative === "" || (relative.split(path.sep)[0] !== ".." && !path.isAbsolute(relative));
}

/**
 * The real path of the deepest existing ancestor, with the missing rest
 * appended: what a path would name if its missing part were created, so a
 * symlink on the way cannot lead out of the allowed roots, and a missing
 * path outside them is refused as outside, telling nothing of what exists.
 */
function realPathOf(absolute: string): string {
  const missing: string[] = [];
  for (let dir = absolute; ; dir = path.dirname(dir)) {
    try {
      return path.join(realpathSync.native(dir), ...missing.reverse());
    } catch {
      if (path.dirname(dir) === dir) return absolute;
      missing.push(path.basename(dir));
    }
  }
}

/**
 * The directory a workspace path names, as the kernel is to be told it:
 * absolute, its symlinks resolved (as the reference adapter resolves it),
 * so the kernel keys its sessions on one path whichever link a client used.
 */
export const realWorkspacePath = (cwd: string): string => realPathOf(path.resolve(cwd));

/**
 * Two cwds name the same workspace when they resolve to the same directory
 * (`/tmp/` and `/tmp`, or a link and its target): what a thread's binding
 * compares.
 */
export function sameWorkspace(a: string, b: string): boolean {
  return a === b || realPathOf(path.resolve(a)) === realPathOf(path.resolve(b));
}

export type WorkspacePhrase = "notAbsolute" | "outsideRoots" | "notDirectory" | "intoProc" | "tooManyLinks" | "cannotCreate";

class WorkspaceError extends Error {
  constructor(readonly phrase: WorkspacePhrase) {
    super(phrase);
  }
}

/** /proc links (`/proc/self/cwd`, `/proc/<pid>/root`, `/dev/fd` into them) name another directory in each process that resolves them. */
const isPerProcess = (absolute: string) => process.platform !== "win32" && (absolute === "/proc" || absolute.startsWith("/proc/"));

/** Linux's own limit on the symlinks one lookup follows. */
const MAX_LINKS = 40;

/** Where a workspace path leads: an existing path, and whether it names a directory still to be created. */
export interface WorkspaceTarget {
  directory: string;
  missing: boolean;
}

/**
 * Where `absolute` leads, one component and one symlink at a time, so that
 * a step into /proc is seen wherever it happens: a whole-path realpath here
 * would resolve `/proc/self/cwd` to this service's directory, while the
 * kernel, resolving the same path, lands in its own. The first missing
 * component ends the walk: the rest is created as plain names, so it may
 * not go up (`..`, from a link's target). Throws a WorkspaceError saying
 * why when the path leads into /proc, loops, or climbs out of what is missing.
 */
function walkWorkspace(absolute: string): WorkspaceTarget {
  const { root } = path.parse(absolute);
  const pending = absolute.slice(root.length).split(path.sep);
  let resolved = root;
  let links = 0;
  while (pending.length > 0) {
    const name = pending.shift()!;
    if (name === "" || name === ".") continue;
    // `resolved` holds no symlink, so going up from it lexically is going up on disk.
    const next = name === ".." ? path.dirname(resolved) : path.join(resolved, name);
    if (isPerProcess(next)) throw new WorkspaceError("intoProc");
    let isLink: boolean;
    try {
      isLink = lstatSync(next).isSymbolicLink();
    } catch {
      const rest = pending.filter((part) => part !== "" && part !== ".");
      if (name === ".." || rest.includes("..")) throw new WorkspaceError("notDirectory");
      return { directory: path.join(next, ...rest), missing: true };
    }
    if (!isLink) {
      resolved = next;
      continue;
    }
    if (++links > MAX_LINKS) throw new WorkspaceError("tooManyLinks");
    const target = readLink(next);
    const targetRoot = path.parse(target).root;
    if (targetRoot !== "") resolved = targetRoot;
    pending.unshift(...target.slice(targetRoot.length).split(path.sep === "/" ? "/" : /[\\/]/));
  }
  return { directory: resolved, missing: false };
}

function readLink(link: string): string {
  try {
    return readlinkSync(link);
  } catch {
    // Replaced or removed since it was seen: as good as missing.
    throw new WorkspaceError("notDirectory");
  }
}

export function isDirectory(absolute: string): boolean {
  try {
    return statSync(absolute).isDirectory();
  } catch {
    return false;
  }
}

/** `~` and `~/…` name the service user's home, as the reference adapter reads them; any other cwd is left as sent. */
export function expandHome(cwd: string): string {
  if (cwd === "~") return os.homedir();
  return cwd.startsWith("~/") ? path.join(os.homedir(), cwd.slice(2)) : cwd;
}

/**
 * Where `cwd` leads when it is a workspace the kernel will find as this
 * service found it (inside an allowed root, reached without /proc, a
 * directory or nothing yet), else why not, as a detail phrase.
 */
export function workspaceTarget(cwd: string, allowedCwds: readonly string[]): WorkspaceTarget | WorkspacePhrase {
  if (!path.isAbsolute(cwd)) return "notAbsolute";
  const absolute = path.resolve(cwd);
  const real = realPathOf(absolute);
  if (!allowedCwds.some((root) => isWithin(real, realPathOf(path.resolve(root))))) return "outsideRoots";
  let target: WorkspaceTarget;
  try {
    target = walkWorkspace(absolute);
  } catch (problem) {
    if (problem instanceof WorkspaceError) return problem.phrase;
    throw problem;
  }
  return target.missing || isDirectory(target.directory) ? target : "notDirectory";
}

/**
 * `workspaceTarget`'s problem in English, for what `IAC_CODE_AGUI_DEFAULT_CWD`
 * is held to at start: there the directory must exist already.
 */
export function workspaceProblem(cwd: string, allowedCwds: readonly string[]): string | undefined {
  const target = workspaceTarget(cwd, allowedCwds);
  const phrase = typeof target === "string" ? target : target.missing ? "notDirectory" : undefined;
  return phrase === undefined ? undefined : translate(`detail.${phrase}`, DEFAULT_LANGUAGE);
}
