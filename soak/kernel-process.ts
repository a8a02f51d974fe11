/** The demo kernel of `kernel-child.mjs` in a process of its own, for the soaks that measure or kill it apart from the service. */
import { fork, type ChildProcess } from "node:child_process";

const KERNEL_CHILD = new URL("./kernel-child.mjs", import.meta.url).pathname;

/** Forks the kernel with `args` (see `kernel-child.mjs`) and resolves once it listens. */
export async function forkKernel(args: string[] = []): Promise<{ child: ChildProcess; url: string }> {
  const child = fork(KERNEL_CHILD, args, { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const { url } = await new Promise<{ url: string }>((resolve, reject) => {
    child.once("message", resolve as (message: unknown) => void);
    child.once("exit", (code) => reject(new Error(`kernel exited with ${code} before it was ready`)));
  });
  return { child, url };
}
