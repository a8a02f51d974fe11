/**
 * `lib/log.ts`: pino as the service configures it. One JSON line per
 * record with an ISO time and a level name; errors keep their type, code,
 * stack and causes but only the service's own words; credential-shaped
 * keys are censored wherever a record would carry them.
 */
import { describe, expect, it } from "@jest/globals";
import { AguiError } from "../../lib/errors.js";
import type { Bindings, ChildLoggerOptions } from "pino";
import { createLogger, lazyChild, serializeError, type Logger } from "../../lib/log.js";
import { StateUnavailableError } from "../../lib/state/thread-store.js";
import { captureLogs } from "../support/logs.js";

const parseFailure = (text: string): SyntaxError => {
  try {
    JSON.parse(text);
  } catch (error) {
    return error as SyntaxError;
  }
  throw new Error("parsed");
};

describe("createLogger", () => {
  it("writes one JSON line per record: ISO time, level name, message, bindings", () => {
    const logs = captureLogs("info");
    logs.logger.child({ threadId: "t-1", runId: "r-1" }).warn({ code: "A2A_UNAVAILABLE" }, "run ended");
    logs.logger.debug("below the level");
    expect(logs.text().split("\n")).toHaveLength(2);
    expect(logs.records()).toEqual([
      expect.objectContaining({
        level: "warn",
        time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        msg: "run ended",
        threadId: "t-1",
        runId: "r-1",
        code: "A2A_UNAVAILABLE",
      }),
    ]);
  });

  it("logs nothing at level silent", () => {
    const lines: string[] = [];
    createLogger({ level: "silent", destination: { write: (line: string) => void lines.push(line) } }).fatal("x");
    expect(lines).toEqual([]);
  });

  it("censors credential-shaped keys at any depth a record might carry them", () => {
    const logs = captureLogs();
    logs.logger.info(
      {
        authorization: "Bearer client-token",
        headers: { authorization: "Bearer kernel-token", cookie: "c" },
        forwardedProps: { iacCode: { llmApiKey: "sk-1", alibabaCloud: { accessKeySecret: "ak", securityToken: "sts", regionId: "cn" } } },
        llm_headers: { "X-Key": "h" },
      },
      "request",
    );
    const text = logs.text();
    for (const secret of ["client-token", "kernel-token", "sk-1", '"ak"', "sts", "X-Key"]) expect(text).not.toContain(secret);
    expect(logs.records()[0]).toMatchObject({ forwardedProps: { iacCode: { alibabaCloud: { regionId: "cn" } } } });
  });
});

describe("serializeError", () => {
  it("keeps an AguiError's code and the params that name no text, never its detail", () => {
    const error = new AguiError("A2A_EXECUTION_FAILED", { rpcCode: -32603, detail: "the kernel says: Zephyr" });
    expect(serializeError(error)).toMatchObject({
      type: "AguiError",
      message: "A2A_EXECUTION_FAILED",
      code: "A2A_EXECUTION_FAILED",
      params: { rpcCode: -32603 },
    });
    expect(JSON.stringify(serializeError(error))).not.toContain("Zephyr");
  });

  it("withholds a message the service did not write, keeping the type, code and stack frames", () => {
    const serialized = serializeError(new AguiError("A2A_PROTOCOL_ERROR", {}, { cause: parseFailure("user text Zephyr") }));
    expect(serialized.cause).toMatchObject({ type: "SyntaxError", message: expect.stringContaining("withheld") });
    expect(serialized.cause!.stack).toMatch(/^SyntaxError: \(withheld[^\n]*\n\s+at /);
    expect(JSON.stringify(serialized)).not.toContain("Zephyr");
  });

  it("keeps a JSON-RPC error's code only", () => {
    const rpc = { code: -32001, message: "task of Zephyr not found", data: [{ reason: "Zephyr" }] };
    const serialized = serializeError(new AguiError("A2A_EXECUTION_FAILED", {}, { cause: rpc }));
    expect(serialized.cause).toEqual({ type: "JsonRpcError", message: expect.stringContaining("withheld"), code: -32001 });
  });

  it("keeps the words of the service's state errors and of Node's system errors, through the causes", () => {
    const system = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:9"), { code: "ECONNREFUSED", syscall: "connect" });
    const refused = new StateUnavailableError("thread state t.json: is larger than 4194304 bytes", { cause: system });
    const serialized = serializeError(new AguiError("STATE_UNAVAILABLE", {}, { cause: refused }));
    expect(serialized).toMatchObject({
      code: "STATE_UNAVAILABLE",
      cause: {
        type: "StateUnavailableError",
        message: "thread state t.json: is larger than 4194304 bytes",
        cause: { message: "connect ECONNREFUSED 127.0.0.1:9", code: "ECONNREFUSED", syscall: "connect" },
      },
    });
  });

  it("stops at a cycle of causes", () => {
    const a = new Error("a") as Error & { cause?: unknown };
    const b = new Error("b", { cause: a });
    a.cause = b;
    expect(serializeError(a).cause?.cause).toBeUndefined();
  });
});

describe("lazyChild", () => {
  it("writes what pino's own child writes, nested children too, and makes no child until a record or a level is asked for", () => {
    const logs = captureLogs("info");
    const made: unknown[] = [];
    const parent = logs.logger;
    // pino's children inherit from their parent: this one counts the children of its children too.
    const child = parent.child as unknown as (this: Logger, bindings: Bindings, options?: ChildLoggerOptions) => Logger;
    parent.child = function (this: Logger, bindings: Bindings, options?: ChildLoggerOptions) {
      made.push(bindings);
      return child.call(this, bindings, options);
    } as unknown as typeof parent.child;

    const request = lazyChild(parent, { method: "POST", path: "/" });
    const run = request.child({ threadId: "t-1", runId: "r-1" });
    expect(made).toEqual([]);

    run.warn({ code: "A2A_UNAVAILABLE" }, "run ended");
    request.info("the request's own");
    run.debug("below the level");
    expect(made).toEqual([
      { method: "POST", path: "/" },
      { threadId: "t-1", runId: "r-1" },
    ]);
    expect(run.isLevelEnabled("debug")).toBe(false);
    run.level = "debug";
    run.debug("at the level now");
    expect(logs.records()).toEqual([
      expect.objectContaining({ level: "warn", msg: "run ended", method: "POST", path: "/", threadId: "t-1", runId: "r-1" }),
      expect.objectContaining({ level: "info", msg: "the request's own", method: "POST", path: "/" }),
      expect.objectContaining({ level: "debug", msg: "at the level now", threadId: "t-1" }),
    ]);
    expect(logs.records()[1]).not.toHaveProperty("threadId");
  });
});
