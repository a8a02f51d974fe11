/**
 * A command that starts the service (an installed bin, `npm start`), run
 * as an operator runs it, up to its start record: where it listens.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";

export interface BinProcess {
  child: ChildProcess;
  url: string;
  stderr(): string;
  /** Every stdout line so far. */
  lines(): string[];
  /** SIGTERM, and resolves once it has exited. */
  stop(): Promise<void>;
}

export async function spawnBin(
  file: string,
  { args = [], cwd, env = {} }: { args?: string[]; cwd?: string; env?: Record<string, string> },
): Promise<BinProcess> {
  const child = spawn(file, args, {
    cwd,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", IAC_CODE_AGUI_HOST: "127.0.0.1", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const lines: string[] = [];
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on("line", (line) => {
      lines.push(line);
      const record = (line.startsWith("{") ? JSON.parse(line) : {}) as { msg?: string; url?: unknown };
      if (/listening on/.test(record.msg ?? "") && typeof record.url === "string") resolve(record.url);
    });
    void exited.then(() => reject(new Error(`${file} exited before listening: ${stderr}${lines.join("\n")}`)));
  });
  return {
    child,
    url,
    stderr: () => stderr,
    lines: () => lines,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}
