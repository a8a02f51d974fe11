/**
 * The bench's client: opens SSE streams with bare node:http (so the client
 * costs the same on both paths), splits records, and reads each text
 * delta's send stamp back out of it. Receive times are taken when a chunk
 * arrives, before any parsing.
 */
import http from "node:http";
import { wallClockMs } from "./support.js";

export const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });

export interface StreamOutcome {
  /** One per stamped text delta: receive time minus send time, ms. */
  latencies: number[];
  stamped: number;
  bytes: number;
  /** The last record's JSON, to check how the stream ended. */
  last: string;
  /** When the request was sent, and when the first stamped text delta arrived (wall clock, ms). */
  sentAt: number;
  firstStampedAt?: number;
}

const STAMP = /(?:"delta"|"text"):"(\d+\.\d{3})\|/g;

/** POSTs `body` to `url` and reads the SSE answer to its end. */
export function openStream(
  url: string,
  body: string,
  options: { keepOpen?: (res: http.IncomingMessage) => void; skipFirst?: number } = {},
): Promise<StreamOutcome> {
  const sentAt = wallClockMs();
  return new Promise((resolve, reject) => {
    postSse(url, body, reject, (res) => {
      if (res.statusCode !== 200) {
        let text = "";
        res.on("data", (chunk: string) => (text += chunk));
        res.on("end", () => reject(new Error(`HTTP ${res.statusCode} from ${url}: ${text.slice(0, 300)}`)));
        return;
      }
      options.keepOpen?.(res);
      const outcome: StreamOutcome = { latencies: [], stamped: 0, bytes: 0, last: "", sentAt };
      let pending = "";
      res.on("data", (chunk: string) => {
        const now = wallClockMs();
        outcome.bytes += chunk.length;
        pending += chunk;
        // Only the new chunk (and the byte before it) can hold a record's end: a record of megabytes is not searched again per chunk.
        if (pending.indexOf("\n\n", Math.max(0, pending.length - chunk.length - 1)) < 0) return;
        const end = pending.lastIndexOf("\n\n");
        const complete = pending.slice(0, end);
        pending = pending.slice(end + 2);
        for (const match of complete.matchAll(STAMP)) {
          outcome.firstStampedAt ??= now;
          if (outcome.stamped++ >= (options.skipFirst ?? 0)) outcome.latencies.push(now - Number(match[1]));
        }
        const lastRecord = complete.slice(complete.lastIndexOf("data: ") + 6);
        if (lastRecord) outcome.last = lastRecord;
      });
      res.on("end", () => resolve(outcome));
      res.on("error", reject);
    });
  });
}

/** POSTs `body` to `url` asking for SSE, and hands the response (read as UTF-8) to `onResponse`; a request error to `onError`. */
export function postSse(url: string, body: string, onError: (error: Error) => void, onResponse: (res: http.IncomingMessage) => void): void {
  const target = new URL(url);
  const request = http.request(
    {
      host: target.hostname,
      port: target.port,
      path: target.pathname,
      method: "POST",
      agent,
      headers: { "content-type": "application/json", accept: "text/event-stream", "A2A-Version": "1.0" },
    },
    (res) => {
      res.setEncoding("utf8");
      onResponse(res);
    },
  );
  request.on("error", onError);
  request.end(body);
}
