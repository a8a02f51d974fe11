/**
 * A kernel out of reach for some calls only: a loopback proxy in front of
 * the real replay kernel that passes every request through, except those
 * whose raw body a test's rule picks, whose connection it resets before the
 * kernel sees them (a kernel that went down, or a call lost on the way).
 * Unlike the cutting proxy, the kernel never learns of a dropped call.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface DroppingProxy {
  url: string;
  /** Drops every request whose body `rule` picks, until called again (undefined passes everything). */
  dropWhen(rule: ((body: string) => boolean) | undefined): void;
  /** How many requests were dropped so far. */
  readonly dropped: number;
  close(): Promise<void>;
}

export async function startDroppingProxy(kernelUrl: string): Promise<DroppingProxy> {
  const upstream = new URL(kernelUrl);
  let rule: ((body: string) => boolean) | undefined;
  let dropped = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      if (rule?.(body.toString("utf8"))) {
        dropped++;
        return req.socket.destroy();
      }
      const { connection: _connection, ...headers } = req.headers;
      const forward = http.request(
        { host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      forward.on("error", () => res.destroy());
      forward.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    dropWhen: (next) => (rule = next),
    get dropped() {
      return dropped;
    },
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}
