/**
 * Signals to a kernel's process group, and whether anything in it still
 * runs. A spawned `detached` child leads a session and group of its own on
 * POSIX, so its group id is its pid; on Windows only the process itself is
 * reached.
 */
import { readdir, readFile } from "node:fs/promises";

const IS_WINDOWS = process.platform === "win32";

/** Sends `signal` to the group led by `pid`; false when nothing was there to get it. */
export function signalGroup(pid: number, signal: NodeJS.Signals): boolean {
  if (pid <= 0) return false;
  try {
    process.kill(IS_WINDOWS ? pid : -pid, signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether a process of the group led by `pid` still runs. The members a
 * wrapper leaves are reparented to init when it exits, and until init reaps
 * them they are zombies that `kill(-pgid, 0)` still finds, for as long as
 * the init takes (some container inits take seconds): on Linux, /proc tells
 * the dead from the living.
 */
export async function groupAlive(pid: number): Promise<boolean> {
  if (IS_WINDOWS || pid <= 0) return false;
  try {
    process.kill(-pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
  if (process.platform !== "linux") return true;
  return (await livingMembers(pid)) ?? true;
}

/** Undefined when /proc cannot be read. */
async function livingMembers(pgid: number): Promise<boolean | undefined> {
  let entries: string[];
  try {
    entries = await readdir("/proc");
  } catch {
    return undefined;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = await readFile(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue; // gone meanwhile
    }
    // "pid (comm) state ppid pgrp …"; comm may hold spaces and parentheses, so fields count from the last ")".
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(pgrp) === pgid && state !== "Z" && state !== "X") return true;
  }
  return false;
}
