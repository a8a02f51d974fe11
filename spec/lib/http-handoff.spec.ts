/**
 * Session handoff through the real service (wire contract §10): each op
 * proxied to the demo kernel's handoff fixture, the protocol check, a kernel
 * without handoff, a kernel that resets the connection, and apply-input's
 * internal run.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import { HANDOFF_FIXTURE } from "../../lib/kernel/handoff-fixture.js";
import { startService, type RunningService } from "../../lib/server.js";
import { startHarness, testConfig, uniqueId, type Harness } from "../support/service.js";

const TOKEN = "handoff-token";
const auth = { authorization: `Bearer ${TOKEN}` };

async function call(service: { url: string }, op: string, body?: unknown, headers: Record<string, string> = auth) {
  const response = await fetch(`${service.url}/iac-code/handoff/${op}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { "content-type": "application/json", ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

const receipt = (threadId = uniqueId("thread")) => ({
  protocol: "agui",
  cwd: os.tmpdir(),
  userId: "user-1",
  mode: "normal",
  guidanceId: uniqueId("guide"),
  aguiIdentity: { threadId, executionId: "exec-1", rosInvocationId: "ros-1" },
});

const bodies: Record<string, unknown> = {
  prepare: { protocol: "agui", threadId: "t-1" },
  restore: { receipt: receipt() },
  authorize: { receipt: receipt() },
  discover: { request: { protocol: "agui" } },
};

/** A kernel on loopback that answers everything with `handle`. */
async function bareKernel(handle: http.RequestListener): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

describe("handoff routes with the demo kernel", () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness({}, { authToken: TOKEN });
  });
  afterAll(() => harness.close());

  it("needs the bearer token", async () => {
    const { status } = await call(harness.service, "capabilities", undefined, {});
    expect(status).toBe(401);
    expect(harness.kernel.handoffs).toHaveLength(0);
  });

  it("proxies capabilities (GET, no body)", async () => {
    const { status, json } = await call(harness.service, "capabilities");
    expect(status).toBe(200);
    expect(json).toEqual(HANDOFF_FIXTURE.capabilities);
    expect(harness.kernel.handoffs.at(-1)).toMatchObject({ op: "capabilities", method: "GET" });
  });

  it.each(Object.keys(bodies))("proxies %s unchanged and answers the kernel's document", async (op) => {
    const { status, json } = await call(harness.service, op, bodies[op]);
    expect(status).toBe(200);
    expect(json).toEqual((HANDOFF_FIXTURE as Record<string, unknown>)[op]);
    expect(harness.kernel.handoffs.at(-1)).toMatchObject({ op, method: "POST", body: bodies[op] });
  });

  it.each([
    ["prepare", { protocol: "a2a" }],
    ["discover", { request: {} }],
    ["restore", { receipt: { protocol: "AGUI" } }],
    ["authorize", {}],
    ["apply-input", { receipt: { protocol: "mcp" } }],
  ])("refuses %s without the AG-UI protocol (400), never asking the kernel", async (op, body) => {
    const before = harness.kernel.handoffs.length;
    const { status, json } = await call(harness.service, op, body);
    expect(status).toBe(400);
    expect(json).toMatchObject({
      error: { code: "INVALID_INPUT", message: "AG-UI handoff identity is required", detail: expect.stringContaining("agui") },
    });
    expect(harness.kernel.handoffs).toHaveLength(before);
  });

  it("answers an unknown op 404", async () => {
    const { status, json } = await call(harness.service, "teleport", { protocol: "agui" });
    expect(status).toBe(404);
    expect(json).toMatchObject({ error: { code: "NOT_FOUND" } });
  });

  it("apply-input delivers the pending input as a run of its own, then asks again", async () => {
    const threadId = uniqueId("thread");
    const body = {
      receipt: { ...receipt(threadId), mode: "normal" },
      pendingInput: { query: "continue where the other sandbox stopped" },
      inputDigest: "d".repeat(64),
      target: { sandboxId: "target", activationId: "a", leaseId: "l", runId: "run-1" },
      callerMetadata: { iac_code: { preferredLanguage: "en" } },
    };
    const { status, json } = await call(harness.service, "apply-input", body);
    expect(status).toBe(200);
    expect(json).toEqual(HANDOFF_FIXTURE.applyInputApplied);
    const applies = harness.kernel.handoffs.filter((request) => request.op === "apply-input");
    expect(applies.slice(-2).map((request) => request.body)).toEqual([
      { ...body, skipDelivery: true },
      { ...body, skipDelivery: true },
    ]);
    const sent = harness.kernel.received.filter((received) => received.method === "SendStreamingMessage");
    const message = (
      sent.at(-1)?.params as { message: { messageId: string; parts: unknown[]; metadata: { iac_code: Record<string, unknown> } } }
    ).message;
    expect(message.messageId).toBe(body.receipt.guidanceId);
    expect(message.parts).toEqual([{ text: "continue where the other sandbox stopped" }]);
    // The receipt's identity and the caller's metadata come back in the run's forwardedProps.
    expect(message.metadata.iac_code).toMatchObject({ rosInvocationId: "ros-1", user_id: "user-1", preferredLanguage: "en" });
  });
});

describe("handoff routes with a kernel that has none", () => {
  let service: RunningService;
  let kernel: Awaited<ReturnType<typeof bareKernel>>;
  beforeAll(async () => {
    kernel = await bareKernel((_req, res) => res.writeHead(404).end());
    service = await startService(testConfig({ a2aUrl: kernel.url, authToken: TOKEN }));
  });
  afterAll(async () => {
    await service.close();
    await kernel.close();
  });

  it("says capabilities are not supported", async () => {
    expect(await call(service, "capabilities")).toEqual({ status: 200, json: { version: "session-handoff-v1", supported: false } });
  });

  it.each(Object.keys(bodies))("answers %s UNSUPPORTED", async (op) => {
    expect(await call(service, op, bodies[op])).toEqual({ status: 200, json: { status: "UNSUPPORTED" } });
  });
});

describe("handoff routes with a kernel that resets the connection", () => {
  let service: RunningService;
  let kernel: Awaited<ReturnType<typeof bareKernel>>;
  beforeAll(async () => {
    kernel = await bareKernel((req) => req.socket.destroy());
    service = await startService(testConfig({ a2aUrl: kernel.url, authToken: TOKEN }));
  });
  afterAll(async () => {
    await service.close();
    await kernel.close();
  });

  it.each(["capabilities", ...Object.keys(bodies)])("answers %s UNKNOWN", async (op) => {
    expect(await call(service, op, op === "capabilities" ? undefined : bodies[op])).toEqual({
      status: 200,
      json: { status: "UNKNOWN", reason: "agui_handoff_upstream_unconfirmed" },
    });
  });
});
