import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { EventType } from "@ag-ui/core";
import { PROTOCOL_VERSION } from "@ag-ui/core";
import { startService } from "../../lib/server.js";
import { expectValidRun } from "../support/agui.js";
import { postRun, runInput, startHarness, testConfig, type Harness } from "../support/service.js";

const TOKEN = "s3cret-token";

describe("the HTTP edge before the stream starts", () => {
  let harness: Harness;
  let url: string;
  const auth = { authorization: `Bearer ${TOKEN}` };
  beforeAll(async () => {
    harness = await startHarness({}, { authToken: TOKEN });
    url = harness.service.url;
  });
  afterAll(() => harness.close());

  it("answers GET /health with the protocol and kernel versions", async () => {
    const response = await fetch(`${url}/health`, { headers: auth });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      status: "ok",
      protocol: "ag-ui",
      protocolVersion: PROTOCOL_VERSION,
      executionKernel: "a2a-1.0",
      version: expect.any(String),
      agent: { a2aDialect: "1.0", name: "iac-code-agui replay kernel", version: "1.0.0" },
      protocolPackageVersion: expect.any(String),
      serverVersion: expect.any(String),
    });
  });

  it.each([
    ["no Authorization header", {}],
    ["a wrong token", { authorization: "Bearer s3cret-tokem" }],
    ["a token prefix", { authorization: "Bearer s3cret" }],
    ["another scheme", { authorization: `Basic ${TOKEN}` }],
  ])("refuses %s with 401 UNAUTHORIZED before anything else", async (_name, headers) => {
    const { status, json } = await postRun(url, "not even json", headers as Record<string, string>);
    expect(status).toBe(401);
    expect(json).toEqual({ error: { code: "UNAUTHORIZED", message: "A valid bearer token is required." } });
    const cancel = await fetch(`${url}/extensions/iac-code/v1/executions/e1/cancel`, {
      method: "POST",
      headers: headers as Record<string, string>,
    });
    expect(cancel.status).toBe(401);
    // The probes are for load balancers, which send no token (see http-probes.spec.ts).
    expect((await fetch(`${url}/health`, { headers: headers as Record<string, string> })).status).toBe(200);
  });

  it("refuses a body that is not application/json with 415", async () => {
    const response = await fetch(url, { method: "POST", headers: { ...auth, "content-type": "text/plain" }, body: "{}" });
    expect(response.status).toBe(415);
    expect(await response.json()).toMatchObject({ error: { code: "UNSUPPORTED_MEDIA_TYPE" } });
  });

  it("refuses malformed JSON with 400 INVALID_JSON", async () => {
    const { status, json } = await postRun(url, '{"threadId": ', auth);
    expect(status).toBe(400);
    expect(json).toMatchObject({ error: { code: "INVALID_JSON" } });
  });

  it("refuses a body over 12 MiB with 413, and accepts one just under it up to validation", async () => {
    const big = JSON.stringify({ padding: "x".repeat(12 * 1024 * 1024) });
    expect((await postRun(url, big, auth)).json).toMatchObject({ error: { code: "REQUEST_TOO_LARGE" } });
    const under = JSON.stringify({ padding: "x".repeat(12 * 1024 * 1024 - 100) });
    const { status, json } = await postRun(url, under, auth);
    expect(status).toBe(400);
    expect(json).toMatchObject({ error: { code: "INVALID_INPUT" } });
  });

  it("refuses an invalid envelope with 400 INVALID_INPUT and never contacts the kernel", async () => {
    const before = harness.kernel.received.length;
    const { status, json } = await postRun(
      url,
      runInput("hi", { tools: [{ name: "client_tool", description: "", parameters: {} }] }),
      auth,
    );
    expect(status).toBe(400);
    expect(json).toMatchObject({
      error: {
        code: "INVALID_INPUT",
        message: "Client-provided tools are not supported.",
        detail: expect.stringContaining("Client-defined tools are not supported: tools must be an empty array."),
      },
    });
    expect(harness.kernel.received.length).toBe(before);
  });

  it("refuses a cwd outside the allowed roots", async () => {
    const { status, json } = await postRun(url, runInput("hi", {}, { cwd: "/etc" }), auth);
    expect(status).toBe(400);
    expect(json).toMatchObject({ error: { code: "INVALID_INPUT" } });
  });

  it("speaks Japanese when preferredLanguage asks for it, else by Accept-Language", async () => {
    const byPreference = await postRun(url, runInput("hi", { tools: [{}] }, { preferredLanguage: "ja-JP" }), auth);
    const byHeader = await postRun(url, "{", { ...auth, "accept-language": "fr;q=0.9, ja;q=0.95, en;q=0.1" });
    const english = await postRun(url, "{", { ...auth, "accept-language": "tlh, *;q=0.5" });
    for (const { json } of [byPreference, byHeader]) {
      expect((json as { error: { message: string } }).error.message).toMatch(/[\u3040-\u30ff\u4e00-\u9faf]/);
    }
    expect((english.json as { error: { message: string } }).error.message).toBe("The request body is not valid JSON.");
  });

  it("answers unknown routes with a JSON 404", async () => {
    const response = await fetch(`${url}/nope`, { headers: auth });
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ error: { code: "NOT_FOUND" } });
  });
});

describe("a kernel that is down", () => {
  it("ends the run with RUN_ERROR A2A_UNAVAILABLE after RUN_STARTED, promptly", async () => {
    // A port that was just free: nothing listens there.
    const probe = await startService(testConfig({ a2aUrl: "http://127.0.0.1:9/" }));
    try {
      const { status, events } = await postRun(probe.url, runInput("hi"));
      expect(status).toBe(200);
      await expectValidRun(events);
      // No session event: the kernel named no task, so there is nothing a client could cancel or observe.
      expect(events.map((event) => event.type)).toEqual([EventType.RUN_STARTED, EventType.RUN_ERROR]);
      expect(events.at(-1)).toMatchObject({ code: "A2A_UNAVAILABLE", message: "The local A2A execution service is unavailable." });
    } finally {
      await probe.close();
    }
  });
});
