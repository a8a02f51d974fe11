/**
 * Where requests meant for the kernel may go (R-CON-2, issue 11): never to
 * where a redirect points (node-fetch would re-send the POST, the user's
 * LLM key and cloud credentials in it), and never off this machine, for
 * every call and not only at start.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "@jest/globals";
import type { AGUIEvent } from "@ag-ui/core";
import { A2AClient } from "../../lib/a2a/client.js";
import { loopbackLookup } from "../../lib/a2a/loopback.js";
import { loadConfig, type Config } from "../../lib/config.js";
import { startService, type RunningService } from "../../lib/server.js";
import { expectValidRun } from "../support/agui.js";
import { startHostileKernel, type HostileKernel } from "../support/hostile-kernel.js";
import { postRun, runInput, testConfig } from "../support/service.js";

const LLM_KEY = "sk-user-llm-key";
const KERNEL_TOKEN = "kernel-token";
const METHODS = ["SendStreamingMessage", "SubscribeToTask", "SendMessage", "GetTask", "CancelTask", "ListTasks", "GET"];

/** The test config, with the documented default of any setting it does not name yet (settings are being added). */
const serviceConfig = (overrides: Partial<Config>): Config => ({ ...loadConfig([], {}), ...testConfig(overrides) });

const errorCodeOf = (events: AGUIEvent[]) => (events.at(-1) as { code?: string } | undefined)?.code;

/** A server that must never be reached; it keeps what it was sent. */
async function startElsewhere(): Promise<{ url: string; received: string[]; close(): Promise<void> }> {
  const received: string[] = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString()));
    req.on("end", () => {
      received.push(`${req.method} ${JSON.stringify(req.headers)} ${body}`);
      res.writeHead(200, { "Content-Type": "application/json" }).end('{"jsonrpc":"2.0","id":1,"result":{}}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    received,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Every call the client makes, each settled: its AguiError code, or "answered". */
async function everyCall(client: A2AClient): Promise<Record<string, string>> {
  const outcome = (promise: Promise<unknown>) =>
    promise.then(
      () => "answered",
      (error: { code?: string }) => error.code ?? String(error),
    );
  const streamed = (stream: ReturnType<A2AClient["subscribeToTask"]>) =>
    outcome(new Promise((resolve, reject) => stream.subscribe({ complete: () => resolve(undefined), error: reject })));
  return {
    sendStreamingMessage: await streamed(client.sendStreamingMessage({ message: { parts: [{ text: "hi" }] } })),
    subscribeToTask: await streamed(client.subscribeToTask("task-1")),
    sendMessage: await outcome(client.sendMessage({ message: { parts: [{ text: "hi" }] } })),
    getTask: await outcome(client.getTask("task-1")),
    cancelTask: await outcome(client.cancelTask("task-1")),
    listTasks: await outcome(client.listTasks("context-1")),
    getPipelineState: await outcome(client.getPipelineState("task-1", 0)),
  };
}

const allUnavailable = {
  sendStreamingMessage: "A2A_UNAVAILABLE",
  subscribeToTask: "A2A_UNAVAILABLE",
  sendMessage: "A2A_UNAVAILABLE",
  getTask: "A2A_UNAVAILABLE",
  cancelTask: "A2A_UNAVAILABLE",
  listTasks: "A2A_UNAVAILABLE",
  getPipelineState: "A2A_UNAVAILABLE",
};

describe("a kernel that answers with a redirect", () => {
  let kernel: HostileKernel;
  let elsewhere: Awaited<ReturnType<typeof startElsewhere>>;
  let service: RunningService;
  let status = 307;

  beforeAll(async () => {
    kernel = await startHostileKernel();
    elsewhere = await startElsewhere();
    for (const method of METHODS) {
      kernel.answer(method, (_request, res) => void res.writeHead(status, { Location: `${elsewhere.url}steal` }).end());
    }
    service = await startService(serviceConfig({ a2aUrl: kernel.url, a2aToken: KERNEL_TOKEN }));
  });
  afterAll(async () => {
    await service.close();
    await elsewhere.close();
    await kernel.close();
  });
  afterEach(() => {
    elsewhere.received.length = 0;
  });

  it.each([301, 302, 303, 307, 308])("ends the run with A2A_UNAVAILABLE on %i, and sends nothing where it points", async (code) => {
    status = code;
    const { events } = await postRun(service.url, runInput("hello", {}, { llmApiKey: LLM_KEY }));
    await expectValidRun(events);
    expect(errorCodeOf(events)).toBe("A2A_UNAVAILABLE");
    // A followed redirect would have reached it before the run could end.
    expect(elsewhere.received).toEqual([]);
  });

  it.each([302, 307])("is not followed by any A2A call (%i)", async (code) => {
    status = code;
    const calls = await everyCall(new A2AClient({ url: kernel.url, token: KERNEL_TOKEN }));
    expect(calls).toEqual(allUnavailable);
    expect(elsewhere.received).toEqual([]);
  });
});

/** An address of this machine that is not loopback, if it has one. */
function externalAddress(): string | undefined {
  return Object.values(os.networkInterfaces())
    .flat()
    .find((address) => address !== undefined && address.family === "IPv4" && !address.internal)?.address;
}

const external = externalAddress();

(external ? describe : describe.skip)("a kernel URL that is not loopback, given past loadConfig", () => {
  let kernel: HostileKernel;
  let service: RunningService;

  beforeAll(async () => {
    // A real kernel, listening on this machine's external address: a request that leaves loopback would reach it.
    kernel = await startHostileKernel({ host: external! });
    service = await startService(serviceConfig({ a2aUrl: kernel.url }));
  });
  afterAll(async () => {
    await service.close();
    await kernel.close();
  });

  it("is refused for every call: the run ends with A2A_UNAVAILABLE and the kernel is never sent a byte", async () => {
    const { events } = await postRun(service.url, runInput("hello", {}, { llmApiKey: LLM_KEY }));
    await expectValidRun(events);
    expect(errorCodeOf(events)).toBe("A2A_UNAVAILABLE");
    expect(await everyCall(new A2AClient({ url: kernel.url }))).toEqual(allUnavailable);
    expect(kernel.requests).toEqual([]);
  });
});

describe("loopbackLookup, which every connection to the kernel resolves through", () => {
  type Found = { address: string; family: number };
  const lookupWith = (found: Found[], all: boolean) =>
    new Promise<{ error: (Error & { code?: string }) | null; result: unknown }>((resolve) => {
      const lookup = loopbackLookup((_hostname, _options, callback) => callback(null, found));
      lookup("kernel.test", { all }, (error, address, family) =>
        resolve({ error: error as (Error & { code?: string }) | null, result: all ? address : { address, family } }),
      );
    });

  it("refuses a name that resolves off this machine", async () => {
    const { error } = await lookupWith([{ address: "192.0.2.7", family: 4 }], true);
    expect(error?.code).toBe("ENOTLOOPBACK");
  });

  it("keeps only the loopback addresses of a name, for one address or all", async () => {
    const found = [
      { address: "192.0.2.7", family: 4 },
      { address: "::1", family: 6 },
      { address: "127.0.0.1", family: 4 },
    ];
    expect(await lookupWith(found, true)).toEqual({
      error: null,
      result: [
        { address: "::1", family: 6 },
        { address: "127.0.0.1", family: 4 },
      ],
    });
    expect(await lookupWith(found, false)).toEqual({ error: null, result: { address: "::1", family: 6 } });
  });

  it("lets a real call to localhost through", async () => {
    const kernel = await startHostileKernel();
    try {
      const port = new URL(kernel.url).port;
      await expect(new A2AClient({ url: `http://localhost:${port}/` }).getTask("task-1")).resolves.toMatchObject({ id: "task-1" });
    } finally {
      await kernel.close();
    }
  });
});
