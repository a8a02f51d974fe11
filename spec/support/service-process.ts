/**
 * The service as an operator runs it: the built `dist/lib/main.js` in a
 * child process, configured by IAC_CODE_AGUI_* variables only, so a test
 * can signal it (SIGTERM, SIGKILL) and watch it exit. `npm test` builds
 * first.
 */
import { spawn, type ChildProcess } from "node:child_process";
import http from "node:http";
import { existsSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";
import { runHttpRequest, transformHttpEventStream } from "@ag-ui/client";
import type { AGUIEvent } from "@ag-ui/core";
import { lastValueFrom, Observable, toArray, type Subscribable } from "rxjs";
import { PROJECT_ROOT } from "../../lib/paths.js";

export const MAIN = path.join(PROJECT_ROOT, "dist", "lib", "main.js");

export interface ServiceProcess {
  child: ChildProcess;
  url: string;
  /** What the process wrote to stderr so far (nothing, once it has started). */
  stderr(): string;
  /** Its log so far: the JSON records it wrote to stdout, one a line. */
  records(): Array<{ level: string; msg: string; [field: string]: unknown }>;
  /** Resolves when the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Whether a process with this pid still exists (signal 0 tests for it without sending anything). */
export const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Starts the command and resolves once its log says where it listens; rejects if it exits first. */
export async function startServiceProcess(env: Record<string, string>): Promise<ServiceProcess> {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run \`npm run build\` (npm test does)`);
  const child = spawn(process.execPath, [MAIN], {
    env: { PATH: process.env.PATH ?? "", IAC_CODE_AGUI_HOST: "127.0.0.1", IAC_CODE_AGUI_PORT: "0", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const lines: string[] = [];
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  const records = () => lines.map((line) => JSON.parse(line) as ReturnType<ServiceProcess["records"]>[number]);
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on("line", (line) => {
      lines.push(line);
      const record = JSON.parse(line) as ReturnType<ServiceProcess["records"]>[number];
      // The service's own record names its url; a kernel it runs may log a "listening on" line of its own.
      if (/listening on/.test(record.msg) && typeof record.url === "string") resolve(record.url);
    });
    void exited.then(({ code, signal }) =>
      reject(new Error(`the service exited (${code ?? signal}) before listening: ${stderr}${lines.join("\n")}`)),
    );
  });
  return { child, url, stderr: () => stderr, records, exited };
}

/**
 * POSTs a run and reads its SSE text until `until` holds for what arrived,
 * leaving the rest of the stream to `rest` (the whole text once it ends, or
 * what arrived before the connection broke).
 *
 * Each run on a connection of its own (`agent: false`), not fetch's pool:
 * a pooled connection left idle between two tests is closed by the server
 * after its keep-alive timeout, and on a loaded machine the pool's own
 * timer, due a second earlier, can fire late enough to send the next run on
 * it as it closes ("other side closed").
 */
export async function openRun(
  url: string,
  body: unknown,
  until: (raw: string) => boolean,
): Promise<{ raw: string; rest: Promise<string>; abort: () => void }> {
  const payload = JSON.stringify(body);
  const request = http.request(url, {
    method: "POST",
    agent: false,
    headers: { "content-type": "application/json", accept: "text/event-stream", "content-length": Buffer.byteLength(payload) },
  });
  const response = await new Promise<http.IncomingMessage>((resolve, reject) => {
    request.once("response", resolve).once("error", reject);
    request.end(payload);
  });
  response.setEncoding("utf8");
  const chunks = response[Symbol.asyncIterator]() as AsyncIterator<string>;
  let raw = "";
  while (!until(raw)) {
    const { value, done } = await chunks.next();
    if (done) break;
    raw += value;
  }
  const seen = raw;
  const rest = (async () => {
    try {
      for (;;) {
        const { value, done } = await chunks.next();
        if (done) return raw;
        raw += value;
      }
    } catch {
      return raw;
    }
  })();
  return { raw: seen, rest, abort: () => request.destroy() };
}

/** An SSE text as a client reads it: through @ag-ui/client's own parser. */
export async function parseSse(raw: string): Promise<AGUIEvent[]> {
  const replay = () => Promise.resolve(new Response(raw, { status: 200, headers: { "content-type": "text/event-stream" } }));
  // @ag-ui/client bundles its own rxjs: adopt its Observable through the interop contract.
  const parsed = transformHttpEventStream(runHttpRequest(replay)) as unknown as Subscribable<AGUIEvent>;
  return lastValueFrom(new Observable<AGUIEvent>((subscriber) => parsed.subscribe(subscriber)).pipe(toArray()));
}
