/**
 * The bench's references for "end to end", two proxies with nothing of the
 * service in them. Each forwards every POST to the kernel as it came and
 * streams the answer back:
 *
 *   raw        bytes as they arrive, without parsing anything: the least
 *              any service between a client and the kernel can do
 *   reencode   the same, plus the one thing no adapter can skip: each SSE
 *              record's JSON is parsed and written out again (no RxJS, no
 *              AG-UI, no state), one write per chunk received. It shows
 *              how much of the raw proxy's rate is left once a service has
 *              to read what it forwards, which bounds what the service's
 *              ratio can reach.
 *
 * Run as a child with the kernel URL and the mode as its arguments;
 * announces `{type: "ready", url}` and answers `{type: "stats"}`.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { processStats } from "./support.js";

export type ProxyMode = "raw" | "reencode";

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

function forward(answer: http.IncomingMessage, res: http.ServerResponse, mode: ProxyMode): void {
  if (mode === "raw") {
    res.writeHead(answer.statusCode ?? 502, answer.headers);
    answer.pipe(res);
    return;
  }
  const { "content-length": _length, ...headers } = answer.headers;
  res.writeHead(answer.statusCode ?? 502, headers);
  answer.setEncoding("utf8");
  let pending = "";
  answer.on("data", (chunk: string) => {
    const { out, rest } = reencode(pending + chunk);
    pending = rest;
    if (out) res.write(out);
  });
  answer.on("end", () => res.end(pending));
}

export async function startSseProxy(kernelUrl: string, mode: ProxyMode = "raw"): Promise<{ url: string; server: http.Server }> {
  const target = new URL(kernelUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
  const server = http.createServer((req, res) => {
    // Hop-by-hop headers belong to each connection, not to the request: the upstream connection is kept alive.
    const { connection: _connection, "keep-alive": _keepAlive, ...headers } = req.headers;
    const upstream = http.request(
      { host: target.hostname, port: target.port, path: target.pathname, method: req.method, headers, agent },
      (answer) => forward(answer, res, mode),
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
  const proxy = await startSseProxy(process.argv[2]!, process.argv[3] === "reencode" ? "reencode" : "raw");
  // A normal exit, so --cpu-prof can write its profile.
  process.on("SIGTERM", () => process.exit(0));
  process.on("message", (message: { type: string; gc?: boolean }) => {
    if (message.type === "stats") process.send!({ type: "stats", ...processStats(message.gc ?? false) });
  });
  process.send({ type: "ready", url: proxy.url });
}
