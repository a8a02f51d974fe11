/**
 * A second reference for "end to end": the raw proxy of `sse-proxy.ts`,
 * plus the one thing no adapter can skip: each SSE record's JSON is parsed
 * and written out again. No RxJS, no AG-UI, no state: it shows how much of
 * the raw proxy's rate is left once a service has to read what it
 * forwards, which bounds what the service's ratio can reach.
 *
 * Run as a child with the kernel URL as its argument; announces
 * `{type: "ready", url}` and answers `{type: "stats"}`.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { processStats } from "./support.js";

/** The records of `text` that are complete, re-encoded, and what is left of it. */
function reencode(text: string): { out: string; rest: string } {
  let out = "";
  let start = 0;
  for (let end = text.indexOf("\n\n"); end >= 0; start = end + 2, end = text.indexOf("\n\n", start)) {
    const record = text.slice(start, end);
    out += record.startsWith("data: ") ? `data: ${JSON.stringify(JSON.parse(record.slice(6)))}\n\n` : `${record}\n\n`;
  }
  return { out, rest: text.slice(start) };
}

export async function startReencodingProxy(kernelUrl: string): Promise<{ url: string; server: http.Server }> {
  const target = new URL(kernelUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
  const server = http.createServer((req, res) => {
    const { connection: _connection, "keep-alive": _keepAlive, ...headers } = req.headers;
    const upstream = http.request(
      { host: target.hostname, port: target.port, path: target.pathname, method: req.method, headers, agent },
      (answer) => {
        const { "content-length": _length, ...answerHeaders } = answer.headers;
        res.writeHead(answer.statusCode ?? 502, answerHeaders);
        answer.setEncoding("utf8");
        let pending = "";
        answer.on("data", (chunk: string) => {
          const { out, rest } = reencode(pending + chunk);
          pending = rest;
          if (out) res.write(out);
        });
        answer.on("end", () => res.end(pending));
      },
    );
    upstream.on("error", () => res.destroy());
    res.on("close", () => upstream.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/`, server };
}

if (process.send) {
  const proxy = await startReencodingProxy(process.argv[2]!);
  process.on("SIGTERM", () => process.exit(0));
  process.on("message", (message: { type: string; gc?: boolean }) => {
    if (message.type === "stats") process.send!({ type: "stats", ...processStats(message.gc ?? false) });
  });
  process.send({ type: "ready", url: proxy.url });
}
