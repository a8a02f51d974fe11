/**
 * What both bench kernels (`scripted-kernel.ts`, `scripted-kernel-v03.ts`)
 * do alike on the wire: read a JSON-RPC request, and pace a stream's text
 * deltas. A module of its own: each kernel module starts a kernel when run
 * as a forked child, so one may not import the other.
 */
import type http from "node:http";
import type { StreamScript } from "./scripted-kernel.js";

/**
 * Writes the script's `events` deltas: one every `intervalMs`, or back to
 * back as fast as the socket takes them (waiting for `drain`), then
 * `finish`; stops early once `closed`. Both bench kernels pace so.
 */
export function sendDeltas(
  res: http.ServerResponse,
  script: StreamScript,
  { delta, finish, closed }: { delta: () => string; finish: () => void; closed: () => boolean },
): void {
  const total = script.events ?? 0;
  let sent = 0;
  if (script.intervalMs) {
    const timer = setInterval(() => {
      if (closed() || sent >= total) {
        clearInterval(timer);
        return finish();
      }
      res.write(delta());
      sent++;
    }, script.intervalMs);
    return;
  }
  const pump = () => {
    while (!closed() && sent < total) {
      sent++;
      if (!res.write(delta())) return void res.once("drain", pump);
    }
    finish();
  };
  pump();
}

/** Reads a JSON-RPC request's body and hands it to `handle`; a body that is not JSON is answered 400. */
export function onRpcRequest<R>(req: http.IncomingMessage, res: http.ServerResponse, handle: (request: R) => void): void {
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    let request: R;
    try {
      request = JSON.parse(Buffer.concat(chunks).toString("utf8")) as R;
    } catch {
      res.writeHead(400).end();
      return;
    }
    handle(request);
  });
}
