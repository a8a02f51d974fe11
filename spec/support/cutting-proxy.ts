/**
 * A kernel that dies mid-stream, as the service sees it: a proxy in front
 * of the real replay kernel that passes every call through, except that
 * the next streaming call's connection is destroyed after a chosen number
 * of SSE records plus some bytes of the one after (a record cut in half).
 * Calls after the cut (CancelTask, GetTask) pass through again, as they
 * would reach a kernel that restarted or a task store that survived.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface Cut {
  records: number;
  extraBytes: number;
}

export interface CuttingProxy {
  url: string;
  /** Arms the cut for the next SendStreamingMessage. */
  cutNext(cut: Cut): void;
  /** Resolves once the armed cut has happened. */
  cutDone(): Promise<void>;
  close(): Promise<void>;
}

export async function startCuttingProxy(kernelUrl: string): Promise<CuttingProxy> {
  const target = new URL(kernelUrl);
  let armed: Cut | undefined;
  let done: () => void = () => {};
  let happened = Promise.resolve();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const streaming = body.includes("SendStreamingMessage");
      const cut = streaming ? armed : undefined;
      if (cut) armed = undefined;
      const { connection: _connection, ...headers } = req.headers;
      const upstream = http.request(
        { host: target.hostname, port: target.port, path: target.pathname, method: req.method, headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          if (!cut) return void answer.pipe(res);
          let seen = "";
          let records = 0;
          const die = () => {
            res.write(seen);
            // Abrupt: no end of the chunked body, as when the kernel process dies.
            res.socket?.destroy();
            answer.destroy();
            upstream.destroy();
            done();
          };
          answer.on("data", (chunk: Buffer) => {
            const text = chunk.toString("utf8");
            for (let i = 0; i < text.length; i++) {
              seen += text[i];
              if (records >= cut.records && seen.length >= cut.extraBytes) return die();
              if (seen.endsWith("\n\n")) {
                res.write(seen);
                seen = "";
                records++;
                // A cut on a record boundary happens at once: the next record may be long in coming.
                if (records === cut.records && cut.extraBytes === 0) return die();
              }
            }
          });
        },
      );
      upstream.on("error", () => res.destroy());
      upstream.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    cutNext(cut) {
      armed = cut;
      happened = new Promise<void>((resolve) => (done = resolve));
    },
    cutDone: () => happened,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
