/**
 * Hardening of the HTTP edge (issue 11), through the real service in front
 * of a real kernel: which Host and Origin may reach it (DNS rebinding, CORS),
 * ids the thread store cannot take, bodies that lie about their encoding or
 * trickle in, how many connections it holds, and what a cwd really names.
 */
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync, statSync } from "node:fs";
import http, { type IncomingHttpHeaders } from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { runHttpRequest, transformHttpEventStream } from "@ag-ui/client";
import type { AGUIEvent } from "@ag-ui/core";
import { Observable, lastValueFrom, toArray, type Subscribable } from "rxjs";
import { expectValidRun } from "../support/agui.js";
import { postRun, runInput, startHarness, uniqueId, type Harness } from "../support/service.js";

interface RawAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  json: unknown;
}

/** node:http rather than fetch: fetch sets Host itself and will not send another. */
function rawRequest(
  url: string,
  {
    method = "GET",
    path: requestPath = "/",
    headers = {},
    body,
  }: { method?: string; path?: string; headers?: Record<string, string>; body?: string | Buffer },
): Promise<RawAnswer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const request = http.request({ hostname, port, method, path: requestPath, headers, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        const isJson = response.headers["content-type"]?.startsWith("application/json") ?? false;
        resolve({ status: response.statusCode!, headers: response.headers, body: text, json: isJson ? JSON.parse(text) : undefined });
      });
      response.on("error", reject);
    });
    request.on("error", reject);
    request.end(body);
  });
}

/** An SSE body read by @ag-ui/client's own parser, as `postRun` reads one. */
function sseEvents(raw: string): Promise<AGUIEvent[]> {
  const replay = () => Promise.resolve(new Response(raw, { status: 200, headers: { "content-type": "text/event-stream" } }));
  // @ag-ui/client bundles its own rxjs: adopt its Observable through the interop contract.
  const parsed = transformHttpEventStream(runHttpRequest(replay)) as unknown as Subscribable<AGUIEvent>;
  return lastValueFrom(new Observable<AGUIEvent>((subscriber) => parsed.subscribe(subscriber)).pipe(toArray()));
}

const postJson = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  rawRequest(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });

describe("Host and Origin, with the default settings (no token)", () => {
  let harness: Harness;
  let url: string;
  beforeAll(async () => {
    harness = await startHarness();
    url = harness.service.url;
  });
  afterAll(() => harness.close());

  it("refuses a run whose Host names another site with 403 HOST_NOT_ALLOWED, before the kernel hears of it", async () => {
    const before = harness.kernel.received.length;
    const answer = await postJson(url, runInput("chat"), { host: "evil.example" });
    expect(answer.status).toBe(403);
    expect(answer.json).toEqual({ error: { code: "HOST_NOT_ALLOWED", message: expect.any(String) } });
    expect(harness.kernel.received.length).toBe(before);
  });

  it.each(["localhost", "localhost:8080", "LocalHost", "127.0.0.1", "127.3.4.5:99", "[::1]", "[::1]:8080"])(
    "answers /health for the loopback Host %s",
    async (host) => {
      const answer = await rawRequest(url, { path: "/health", headers: { host } });
      expect(answer.status).toBe(200);
    },
  );

  // /health and /ready answer any Host (see http-probes.spec.ts); every other route, /metrics among them, does not.
  it.each(["evil.example", "evil.example:8080", "127.0.0.1.nip.io", "localhost.evil.example", "evil.example@localhost", "10.0.0.5"])(
    "refuses /metrics for the Host %s",
    async (host) => {
      const answer = await rawRequest(url, { path: "/metrics", headers: { host } });
      expect(answer.status).toBe(403);
      expect(answer.json).toMatchObject({ error: { code: "HOST_NOT_ALLOWED" } });
    },
  );

  it("refuses the sandbox page too for another site's Host", async () => {
    expect((await rawRequest(url, { path: "/sandbox", headers: { host: "evil.example" } })).status).toBe(403);
  });

  it("refuses a run a page of another site sends (its Origin) with 403 ORIGIN_NOT_ALLOWED", async () => {
    const before = harness.kernel.received.length;
    const { status, json } = await postRun(url, runInput("chat"), { origin: "https://evil.example" });
    expect(status).toBe(403);
    expect(json).toMatchObject({ error: { code: "ORIGIN_NOT_ALLOWED" } });
    expect(harness.kernel.received.length).toBe(before);
    expect((await postRun(url, runInput("chat"), { origin: "null" })).status).toBe(403);
  });

  it("serves a run sent from its own page (same origin)", async () => {
    const { status, events } = await postRun(url, runInput("chat"), { origin: url });
    expect(status).toBe(200);
    await expectValidRun(events);
    expect(events.at(-1)).toMatchObject({ type: "RUN_FINISHED" });
  });

  it("answers no CORS preflight when no origin is allowed", async () => {
    const answer = await rawRequest(url, {
      method: "OPTIONS",
      headers: { origin: "https://app.example", "access-control-request-method": "POST" },
    });
    expect(answer.status).toBe(403);
    expect(answer.headers["access-control-allow-origin"]).toBeUndefined();
  });
});

describe("IAC_CODE_AGUI_ALLOWED_HOSTS and IAC_CODE_AGUI_ALLOWED_ORIGINS, with a token", () => {
  const TOKEN = "hardening-token";
  const auth = { authorization: `Bearer ${TOKEN}` };
  let harness: Harness;
  let url: string;
  beforeAll(async () => {
    harness = await startHarness({}, { authToken: TOKEN, allowedHosts: ["agui.internal"], allowedOrigins: ["https://app.example"] });
    url = harness.service.url;
  });
  afterAll(() => harness.close());

  it("answers an allowed Host, with or without a port", async () => {
    for (const host of ["agui.internal", "agui.internal:8080", "AGUI.internal"]) {
      expect((await rawRequest(url, { path: "/health", headers: { host, ...auth } })).status).toBe(200);
    }
  });

  it("checks the Host before the token: another site's Host is 403 even without a token", async () => {
    const answer = await postJson(url, runInput("chat"), { host: "evil.example" });
    expect(answer.status).toBe(403);
    expect(answer.json).toMatchObject({ error: { code: "HOST_NOT_ALLOWED" } });
  });

  it("answers the CORS preflight of an allowed origin without a token, with the headers an AG-UI client sends", async () => {
    const answer = await rawRequest(url, {
      method: "OPTIONS",
      headers: {
        origin: "https://app.example",
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type,authorization,accept,accept-language",
      },
    });
    expect(answer.status).toBe(204);
    expect(answer.headers["access-control-allow-origin"]).toBe("https://app.example");
    expect(answer.headers["access-control-allow-methods"]).toMatch(/\bPOST\b/);
    const allowed = String(answer.headers["access-control-allow-headers"])
      .split(",")
      .map((name) => name.trim().toLowerCase());
    expect(allowed).toEqual(expect.arrayContaining(["content-type", "authorization", "accept", "accept-language"]));
    expect(answer.headers.vary).toMatch(/origin/i);
  });

  it("refuses the preflight of another origin with 403 ORIGIN_NOT_ALLOWED", async () => {
    const answer = await rawRequest(url, {
      method: "OPTIONS",
      headers: { origin: "https://evil.example", "access-control-request-method": "POST" },
    });
    expect(answer.status).toBe(403);
    expect(answer.json).toMatchObject({ error: { code: "ORIGIN_NOT_ALLOWED" } });
    expect(answer.headers["access-control-allow-origin"]).toBeUndefined();
  });

  it("streams a run to an allowed origin with CORS headers, and still requires the token", async () => {
    const origin = { origin: "https://app.example" };
    const refused = await fetch(url, { method: "POST", headers: { ...origin, "content-type": "application/json" }, body: "{}" });
    expect(refused.status).toBe(401);
    expect(refused.headers.get("access-control-allow-origin")).toBe("https://app.example");

    const response = await fetch(url, {
      method: "POST",
      headers: { ...origin, ...auth, "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify(runInput("chat")),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("access-control-allow-origin")).toBe("https://app.example");
    await expectValidRun(await sseEvents(await response.text()));
  });
});

describe("ids the request envelope carries", () => {
  let harness: Harness;
  let url: string;
  beforeAll(async () => {
    harness = await startHarness();
    url = harness.service.url;
  });
  afterAll(() => harness.close());

  const withId = (field: string, value: string) => {
    const input = runInput("chat") as Record<string, unknown> & { messages: Array<Record<string, unknown>> };
    if (field === "messageId") input.messages[0]!.id = value;
    else if (field === "interruptId") input.resume = [{ interruptId: value, status: "cancelled" }];
    else input[field] = value;
    return input;
  };

  it.each(["threadId", "runId", "parentRunId", "messageId", "interruptId"])(
    "refuses a lone surrogate in %s with 400 INVALID_INPUT",
    async (field) => {
      // JSON.stringify writes a lone surrogate as the escape "\ud800", as a client would send it.
      const { status, json } = await postRun(url, JSON.stringify(withId(field, `id-\ud800`)));
      expect(status).toBe(400);
      expect(json).toMatchObject({ error: { code: "INVALID_INPUT" } });
    },
  );

  it.each(["threadId", "runId", "parentRunId", "messageId", "interruptId"])(
    "refuses %s longer than 256 characters with 400 INVALID_INPUT",
    async (field) => {
      const { status, json } = await postRun(url, withId(field, "x".repeat(257)));
      expect(status).toBe(400);
      expect(json).toMatchObject({ error: { code: "INVALID_INPUT" } });
    },
  );

  it.each([
    ["cancel", "/extensions/iac-code/v1/executions/execution-1/cancel", { rosInvocationId: "ros-1" }],
    ["subscribe", "/extensions/iac-code/v1/executions/execution-1/subscribe", {}],
  ])("refuses a lone surrogate or an over-long threadId on the %s route with 400 INVALID_INPUT", async (_route, route, rest) => {
    for (const threadId of ["id-\ud800", "x".repeat(257)]) {
      const response = await fetch(`${url}${route}`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "text/event-stream" },
        body: JSON.stringify({ threadId, ...rest }),
      });
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ error: { code: "INVALID_INPUT" } });
    }
  });

  it("serves ids of exactly 256 characters, astral characters counted once", async () => {
    const long = (prefix: string) => `${prefix}-${uniqueId("")}`.padEnd(254, "x") + "😀😀";
    const { status, events } = await postRun(url, runInput("chat", { threadId: long("thread"), runId: long("run") }));
    expect(status).toBe(200);
    await expectValidRun(events);
  });
});

describe("request bodies", () => {
  let harness: Harness;
  let url: string;
  beforeAll(async () => {
    harness = await startHarness({}, { bodyTimeoutS: 1, maxConnections: 3 });
    url = harness.service.url;
  });
  afterAll(() => harness.close());

  it("refuses a body that is not what its Content-Encoding says with 400 INVALID_INPUT", async () => {
    const answer = await rawRequest(url, {
      method: "POST",
      headers: { "content-type": "application/json", "content-encoding": "gzip" },
      body: JSON.stringify(runInput("chat")),
    });
    expect(answer.status).toBe(400);
    expect(answer.json).toMatchObject({ error: { code: "INVALID_INPUT" } });
  });

  it("still reads a gzip body that is gzip", async () => {
    const answer = await rawRequest(url, {
      method: "POST",
      headers: { "content-type": "application/json", "content-encoding": "gzip" },
      body: gzipSync(JSON.stringify(runInput("chat"))),
    });
    expect(answer.status).toBe(200);
    await expectValidRun(await sseEvents(answer.body));
  });

  it("answers a body that trickles in past IAC_CODE_AGUI_BODY_TIMEOUT_S with 408 REQUEST_TIMEOUT and closes", async () => {
    const { hostname, port } = new URL(url);
    const socket = net.connect(Number(port), hostname);
    let received = "";
    socket.on("data", (chunk: Buffer) => (received += chunk.toString("utf8")));
    const started = Date.now();
    socket.write(`POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"threadId":`);
    // One more byte now and then would keep an idle timeout from ever firing; the deadline is on the whole body.
    const trickle = setInterval(() => socket.write(" "), 200);
    try {
      await new Promise<void>((resolve) => socket.once("close", () => resolve()));
    } finally {
      clearInterval(trickle);
    }
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(received).toMatch(/^HTTP\/1\.1 408 /);
    expect(received).toContain('"code":"REQUEST_TIMEOUT"');
  }, 15_000);

  it("holds at most IAC_CODE_AGUI_MAX_CONNECTIONS connections: a new one past them closes the longest idle", async () => {
    const { hostname, port } = new URL(url);
    const open = (): Promise<net.Socket> =>
      new Promise((resolve, reject) => {
        const socket = net.connect(Number(port), hostname, () => resolve(socket));
        socket.once("error", reject);
      });
    /** A /health on a kept-alive connection: the status line, or "closed" if the service dropped the connection. */
    const health = (socket: net.Socket): Promise<string> =>
      new Promise((resolve) => {
        let text = "";
        const onData = (chunk: Buffer) => {
          text += chunk.toString("utf8");
          if (text.includes("\r\n\r\n") && text.includes('"status":"ok"')) done(text.split("\r\n")[0]!);
        };
        const done = (result: string) => {
          socket.off("data", onData);
          resolve(result);
        };
        socket.on("data", onData);
        socket.once("close", () => done("closed"));
        socket.once("error", () => done("closed"));
        socket.write("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
      });

    const closed = (socket: net.Socket) =>
      new Promise<void>((resolve) => (socket.destroyed ? resolve() : socket.once("close", () => resolve())));

    // Idle connections (kept alive between requests) make room: a new one past the cap closes the longest idle.
    const held = [await open(), await open(), await open()];
    for (const socket of held) expect(await health(socket)).toBe("HTTP/1.1 200 OK");
    const fourth = await open();
    await closed(held[0]!);
    expect(await health(fourth)).toBe("HTTP/1.1 200 OK");
    expect(await health(held[1]!)).toBe("HTTP/1.1 200 OK");
    held.push(fourth);

    for (const socket of held) socket.destroy();
  });
});

describe("cwd: what the kernel will resolve it to", () => {
  let harness: Harness;
  let url: string;
  let workspace: string;
  beforeAll(async () => {
    // The service's own directory is allowed, as it is by default: /proc/self/cwd resolves to it here.
    harness = await startHarness({}, { allowedCwds: [os.tmpdir(), process.cwd()] });
    url = harness.service.url;
    workspace = mkdtempSync(path.join(os.tmpdir(), "agui-hardening-cwd-"));
  });
  afterAll(() => harness.close());

  const refused = async (cwd: string) => {
    const { status, json } = await postRun(url, runInput("chat", {}, { cwd }));
    expect([cwd, status]).toEqual([cwd, 400]);
    expect(json).toMatchObject({ error: { code: "INVALID_INPUT" } });
  };

  (process.platform === "linux" ? it : it.skip)("refuses /proc paths, and links into /proc", async () => {
    await refused("/proc/self/cwd");
    await refused("/proc/self/root/tmp");
    await refused(`/proc/${process.pid}/cwd`);
    const link = path.join(workspace, "to-proc");
    symlinkSync("/proc/self/cwd", link);
    await refused(link);
  });

  it("refuses a NUL byte and a file, and creates a missing directory inside an allowed root (issue 13)", async () => {
    await refused(`${workspace}\u0000/x`);
    const file = path.join(workspace, "file.txt");
    writeFileSync(file, "not a directory");
    await refused(file);
    const missing = path.join(workspace, "missing", "deeper");
    const { status } = await postRun(url, runInput("chat", {}, { cwd: missing }));
    expect(status).toBe(200);
    expect(statSync(missing).isDirectory()).toBe(true);
  });

  it("takes `dir/`, `dir` and a link to dir for the same workspace of a thread", async () => {
    const dir = path.join(workspace, "project");
    mkdirSync(dir);
    const alias = path.join(workspace, "alias");
    symlinkSync(dir, alias);
    const first = runInput("chat", {}, { cwd: `${dir}/` });
    await expectValidRun((await postRun(url, first)).events);
    for (const cwd of [dir, `${alias}/.`]) {
      const next = { ...first, runId: uniqueId("run"), messages: [{ id: uniqueId("msg"), role: "user", content: "chat" }] };
      next.forwardedProps = { iacCode: { ...first.forwardedProps.iacCode, cwd } };
      const { status, events, json } = await postRun(url, next);
      expect([cwd, status, json]).toEqual([cwd, 200, undefined]);
      await expectValidRun(events);
    }
    const elsewhere = { ...first, runId: uniqueId("run") };
    elsewhere.forwardedProps = { iacCode: { ...first.forwardedProps.iacCode, cwd: workspace } };
    expect((await postRun(url, elsewhere)).json).toMatchObject({ error: { code: "THREAD_BINDING_CONFLICT" } });
  });
});
