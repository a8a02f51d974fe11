/**
 * The kernel's stream as undici hands it over (`kernel-dispatch.ts`): what
 * arrives with the headers, before the reader listens, is neither lost nor
 * reordered, and an end or a cut that came meanwhile is told after it, once.
 */
import { afterEach, describe, expect, it } from "@jest/globals";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { kernelStream } from "../../lib/a2a/kernel-fetch.js";
import type { KernelAnswer } from "../../lib/a2a/kernel-dispatch.js";

const LIMITS = { firstByteMs: 5_000, maxResponseBytes: 1_000_000 };
const servers: http.Server[] = [];

/** A server that answers each request with `answer`; `answered` settles once the answer has gone to the socket. */
async function serve(answer: (res: http.ServerResponse, done: () => void) => void): Promise<{ url: string; answered: Promise<void> }> {
  let done!: () => void;
  const answered = new Promise<void>((resolve) => (done = resolve));
  const server = http.createServer((req, res) => {
    req.resume();
    req.once("end", () => answer(res, done));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, answered };
}

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

/** What the answer hands over once listened to, as a reader sets its listeners: data first, then the rest. */
function readAll(answer: KernelAnswer): Promise<{ text: string; ends: string[] }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const ends: string[] = [];
    answer.on("data", (chunk) => chunks.push(chunk));
    answer.once("end", () => ends.push("end"));
    answer.on("error", (error) => ends.push(`error: ${error instanceof Error ? error.message : String(error)}`));
    answer.once("close", () => {
      ends.push("close");
      resolve({ text: Buffer.concat(chunks).toString("utf8"), ends });
    });
  });
}

/**
 * The answer once its headers are in and the server has sent all it sends,
 * and a few turns of the loop later, nothing listening meanwhile: what the
 * socket brought is taken before the reader comes. (Were it still on the
 * way, it would go straight to the listener, and the checks hold as well.)
 */
async function answerOf({ url, answered }: { url: string; answered: Promise<void> }): Promise<KernelAnswer> {
  const answer = await kernelStream(url, { headers: { "Content-Type": "application/json" }, body: "{}" }, LIMITS).response;
  await answered;
  for (let turn = 0; turn < 3; turn++) await new Promise((resolve) => setImmediate(resolve));
  return answer;
}

describe("the kernel's answer, read with undici's dispatch", () => {
  it("hands over the records that came with the headers, in order, then its end, once", async () => {
    const server = await serve((res, done) => {
      res.writeHead(200, { "Content-Type": "text/event-stream" });
      res.write("data: one\n\n");
      res.end("data: two\n\n", done);
    });
    const read = await readAll(await answerOf(server));
    expect(read).toEqual({ text: "data: one\n\ndata: two\n\n", ends: ["end", "close"] });
  });

  it("tells a cut after the chunks that came before it, before anyone listened", async () => {
    const server = await serve((res, done) => {
      res.writeHead(200, { "Content-Type": "text/event-stream" });
      res.write("data: before the cut\n\n", () => {
        res.destroy();
        done();
      });
    });
    const read = await readAll(await answerOf(server));
    expect(read.text).toBe("data: before the cut\n\n");
    expect(read.ends).toHaveLength(2);
    expect(read.ends[0]).toMatch(/^error: /);
    expect(read.ends[1]).toBe("close");
  });

  it("tells nothing more once it is given up, and closes the connection", async () => {
    let serverSawClose!: () => void;
    const closed = new Promise<void>((resolve) => (serverSawClose = resolve));
    const server = await serve((res, done) => {
      res.socket?.once("close", () => serverSawClose());
      res.writeHead(200, { "Content-Type": "text/event-stream" });
      res.write("data: one\n\n", done);
    });
    const answer = await answerOf(server);
    const told: string[] = [];
    answer.once("end", () => told.push("end"));
    answer.on("error", () => told.push("error"));
    answer.once("close", () => told.push("close"));
    answer.destroy();
    answer.on("data", () => told.push("data"));
    await closed;
    expect(told).toEqual([]);
    expect(answer.destroyed).toBe(true);
  });
});
