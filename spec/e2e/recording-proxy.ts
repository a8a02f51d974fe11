/**
 * A loopback HTTP proxy in front of a service that keeps every SSE body it
 * passes on, byte for byte, as the service wrote it.
 *
 * The sandbox specs used to read the streams back through the browser
 * (Playwright's `response.text()`, which asks Chromium for the body once
 * the stream has ended). That read can fail after the fact, with the page
 * still open and the run shown in full, and then it failed the spec as an
 * unhandled rejection of a stream the test had not yet looked at. Here the
 * bodies are kept by Node as they pass, so what the page got and what the
 * spec checks are the same bytes, and no read happens after the stream.
 *
 * Requests and answers pass unchanged (the Host and Origin headers too, so
 * the service sees a page of its own origin: the proxy's).
 */
import { createServer, request as forward, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";

/** One streamed answer the page got: where it was sent and its SSE text, complete once the stream ended. */
export interface ReceivedStream {
  path: string;
  body: Promise<string>;
}

export interface RecordingProxy {
  url: string;
  /** Every `text/event-stream` answer, in the order their headers came. */
  streams: ReceivedStream[];
  close(): Promise<void>;
}

/** The text the stream carried: all of it once it ended, what had come if the page hung up first. */
function keepBody(answer: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  answer.on("data", (chunk: Buffer) => chunks.push(chunk));
  return new Promise((resolve, reject) => {
    answer.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    answer.on("close", () => resolve(Buffer.concat(chunks).toString("utf8")));
    answer.on("error", reject);
  });
}

export async function startRecordingProxy(target: string): Promise<RecordingProxy> {
  const upstream = new URL(target);
  const streams: ReceivedStream[] = [];
  const server = createServer((req, res) => {
    const outgoing = forward(
      // A connection of its own per request, closed with it, so no idle socket of the proxy's holds the service open.
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers, agent: false },
      (answer) => {
        if ((answer.headers["content-type"] ?? "").startsWith("text/event-stream")) {
          const body = keepBody(answer);
          // A stream nobody reads is not a failure of the test running when it ends.
          body.catch(() => undefined);
          streams.push({ path: new URL(req.url ?? "/", target).pathname, body });
        }
        res.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
        // SSE must reach the page as it is written, not when a buffer fills.
        res.flushHeaders();
        answer.pipe(res);
      },
    );
    outgoing.on("error", () => res.destroy());
    // The page stopping a run closes its request: the service must see that, as it would without the proxy.
    res.on("close", () => {
      if (!res.writableFinished) outgoing.destroy();
    });
    req.pipe(outgoing);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    streams,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
