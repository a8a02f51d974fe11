/**
 * The bench's reference for "end to end": a raw SSE pass-through proxy. It
 * forwards each POST to the kernel as it came and pipes the answer back,
 * bytes as they arrive, without parsing anything: the least any service
 * between a client and the kernel can do.
 *
 * Run as a child with the kernel URL as its argument; announces
 * `{type: "ready", url}` and answers `{type: "stats"}`.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { processStats } from "./support.js";

export async function startSseProxy(kernelUrl: string): Promise<{ url: string; server: http.Server }> {
  const target = new URL(kernelUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
  const server = http.createServer((req, res) => {
    // Hop-by-hop headers belong to each connection, not to the request: the upstream connection is kept alive.
    const { connection: _connection, "keep-alive": _keepAlive, ...headers } = req.headers;
    const upstream = http.request(
      { host: target.hostname, port: target.port, path: target.pathname, method: req.method, headers, agent },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
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
  const proxy = await startSseProxy(process.argv[2]!);
  // A normal exit, so --cpu-prof can write its profile.
  process.on("SIGTERM", () => process.exit(0));
  process.on("message", (message: { type: string; gc?: boolean }) => {
    if (message.type === "stats") process.send!({ type: "stats", ...processStats(message.gc ?? false) });
  });
  process.send({ type: "ready", url: proxy.url });
}
