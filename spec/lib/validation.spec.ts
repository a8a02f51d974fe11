import { describe, expect, it, beforeAll, afterAll } from "@jest/globals";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { AguiError } from "../../lib/errors.js";
import { SCHEMAS_DIR } from "../../lib/paths.js";
import { validateRunInput } from "../../lib/validation.js";
import type { IacCodeExtension } from "../../lib/model/run-input.js";

const MiB = 1024 * 1024;
// Built once: encoding megabytes per test would dominate the run time.
const base64Of = (bytes: number) => Buffer.alloc(bytes, 0xab).toString("base64");
const IMAGE_8_MIB = base64Of(8 * MiB);
const IMAGE_8_MIB_PLUS_1 = base64Of(8 * MiB + 1);
const IMAGE_6_MIB = base64Of(6 * MiB);
const IMAGE_5_MIB = base64Of(5 * MiB);
const TINY_PNG = Buffer.from("89504e470d0a1a0a", "hex").toString("base64");

let root: string;
let outside: string;
let config: { allowedCwds: string[] };

beforeAll(() => {
  root = mkdtempSync(path.join(os.tmpdir(), "agui-validation-root-"));
  outside = mkdtempSync(path.join(os.tmpdir(), "agui-validation-outside-"));
  mkdirSync(path.join(root, "project"));
  config = { allowedCwds: [root] };
});

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

const image = (value: string, mimeType = "image/png") => ({ type: "image", source: { type: "data", value, mimeType } });

/** A run input to break on purpose: any field may be dropped or replaced by something the validator must refuse. */
interface RunInputUnderTest {
  [field: string]: unknown;
  messages: unknown[];
  forwardedProps: { iacCode: Record<string, unknown> };
}

function validInput(): RunInputUnderTest {
  return {
    threadId: "thread-1",
    runId: "run-1",
    state: {},
    messages: [{ id: "m-1", role: "user", content: "Deploy a VPC" }],
    tools: [],
    context: [],
    forwardedProps: { iacCode: { schemaVersion: 1, rosInvocationId: "ros-1", cwd: path.join(root, "project") } },
  };
}

const withIacCode = (fields: Record<string, unknown>) => {
  const input = validInput();
  Object.assign(input.forwardedProps.iacCode, fields);
  return input;
};

const withUserContent = (content: unknown) => {
  const input = validInput();
  input.messages = [{ id: "m-1", role: "user", content }];
  return input;
};

function rejection(body: unknown): AguiError {
  try {
    validateRunInput(body, config);
  } catch (error) {
    if (error instanceof AguiError) return error;
    throw error;
  }
  throw new Error("expected validateRunInput to reject the input");
}

function expectRejected(body: unknown, reason?: string): AguiError {
  const error = rejection(body);
  expect(error.code).toBe("INVALID_INPUT");
  expect(error.params.reason).toBe(reason);
  expect(typeof error.params.detail).toBe("string");
  return error;
}

describe("validateRunInput: envelope (R-IN)", () => {
  it("returns the body itself when it is valid", () => {
    const input = validInput();
    expect(validateRunInput(input, config)).toBe(input);
  });

  it("tolerates top-level fields that AG-UI's RunAgentInput allows", () => {
    const input = { ...validInput(), protocolVersion: "1.0", parentRunId: "run-0", futureField: { any: 1 } };
    expect(() => validateRunInput(input, config)).not.toThrow();
  });

  it("accepts any JSON as state, including null", () => {
    expect(() => validateRunInput({ ...validInput(), state: null }, config)).not.toThrow();
  });

  it.each([
    ["threadId", undefined],
    ["runId", undefined],
    ["state", undefined],
    ["messages", undefined],
    ["context", undefined],
    ["tools", "tools"],
    ["forwardedProps", "forwardedProps"],
  ])("rejects a missing %s", (field, reason) => {
    const input = validInput();
    delete input[field];
    const error = expectRejected(input, reason);
    expect(error.params.detail).toContain(field);
  });

  it("rejects a body that is not an object, with the reference's message for it", () => {
    expectRejected(null, "notObject");
    expectRejected([], "notObject");
  });

  it("rejects an empty threadId or runId", () => {
    expectRejected({ ...validInput(), threadId: "" });
    expectRejected({ ...validInput(), runId: "" });
  });

  it("rejects client-defined tools as a tools failure", () => {
    const error = expectRejected({ ...validInput(), tools: [{ name: "t", description: "d" }] }, "tools");
    expect(error.params.detail).toContain("/tools");
  });

  it("rejects forwardedProps without iacCode", () => {
    expectRejected({ ...validInput(), forwardedProps: { other: 1 } }, "forwardedProps");
  });

  it("rejects a context entry without a value", () => {
    expectRejected({ ...validInput(), context: [{ description: "d" }] });
  });

  it("rejects an unknown message role and a message without an id", () => {
    expectRejected({ ...validInput(), messages: [{ id: "m", role: "robot", content: "x" }] });
    expectRejected({ ...validInput(), messages: [{ role: "user", content: "x" }] });
  });

  it("checks content per role", () => {
    const history = [
      { id: "s", role: "system", content: "sys" },
      { id: "a", role: "assistant", toolCalls: [{ id: "c", type: "function", function: { name: "f", arguments: "{}" } }] },
      { id: "t", role: "tool", content: "ok", toolCallId: "c" },
      { id: "r", role: "reasoning", content: "thinking" },
      { id: "act", role: "activity", activityType: "progress", content: { step: 1 } },
      { id: "u", role: "user", content: "go" },
    ];
    expect(() => validateRunInput({ ...validInput(), messages: history }, config)).not.toThrow();
    expectRejected({ ...validInput(), messages: [{ id: "s", role: "system", content: [{ type: "text", text: "x" }] }, ...history] });
    expectRejected({ ...validInput(), messages: [{ id: "t", role: "tool", content: "ok" }, ...history] });
    expectRejected({ ...validInput(), messages: [{ id: "u", role: "user" }] }, undefined);
  });

  it("requires a user message for a new run", () => {
    const input = { ...validInput(), messages: [{ id: "a", role: "assistant", content: "hi" }] };
    expectRejected(input, "userMessage");
    expectRejected({ ...input, resume: [] }, "userMessage");
  });

  it("accepts a resume without a user message", () => {
    const input = { ...validInput(), messages: [], resume: [{ interruptId: "i-1", status: "resolved", payload: { decision: "deny" } }] };
    expect(() => validateRunInput(input, config)).not.toThrow();
  });

  it("rejects a resume entry with an unknown status or without an interruptId", () => {
    expectRejected({ ...validInput(), resume: [{ interruptId: "i-1", status: "maybe" }] });
    expectRejected({ ...validInput(), resume: [{ status: "cancelled" }] });
  });
});

describe("validateRunInput: forwardedProps.iacCode (R-EXT)", () => {
  it("accepts every documented field", () => {
    const input = withIacCode({
      model: "qwen-max",
      llmApiKey: "sk-secret",
      thinking: { enabled: true, effort: "high", budget: 2048 },
      userId: "u-1",
      channel: "console",
      preferredLanguage: "ja",
      candidatePresentation: "rich",
      runMode: "pipeline",
      pipelineName: "deploy",
      cleanupOnly: false,
      alibabaCloud: { accessKeyId: "AK", accessKeySecret: "SK", securityToken: "STS", regionId: "cn-hangzhou" },
    });
    expect(() => validateRunInput(input, config)).not.toThrow();
  });

  it("accepts what the reference's real client sends: LLM headers, guidance fields, an execution fence", () => {
    const input = withIacCode({
      llmHeaders: { Authorization: "Bearer sk-secret" },
      activeGuidance: true,
      runMode: "pipeline",
      guidanceId: "g-1",
      inputDigest: "d-1",
      executionFence: { version: "session-handoff-v1", owner: "agui" },
    });
    expect(() => validateRunInput(input, config)).not.toThrow();
  });

  it("rejects an unknown key, naming the key but not its value", () => {
    const error = expectRejected(withIacCode({ llmSecrets: { Authorization: "Bearer sk-secret" } }), "forwardedProps");
    expect(error.params.detail).toContain("llmSecrets");
    expect(error.params.detail).not.toContain("sk-secret");
  });

  it("rejects LLM headers that are not strings, without echoing them", () => {
    const error = expectRejected(withIacCode({ llmHeaders: { "X-Key": 1234567 } }), "forwardedProps");
    expect(error.params.detail).not.toContain("1234567");
  });

  it("takes guidanceId and inputDigest of a guidance run as optional, as the reference adapter does, and refuses empty ones", () => {
    expect(() => validateRunInput(withIacCode({ activeGuidance: true, runMode: "pipeline" }), config)).not.toThrow();
    expect(() =>
      validateRunInput(withIacCode({ activeGuidance: true, runMode: "pipeline", guidanceId: "g-1", inputDigest: null }), config),
    ).not.toThrow();
    expectRejected(withIacCode({ guidanceId: "" }), "forwardedProps");
    expectRejected(withIacCode({ activeGuidance: "yes" }), "forwardedProps");
  });

  it("rejects unknown keys in nested objects", () => {
    expectRejected(withIacCode({ thinking: { enabled: true, level: 3 } }), "forwardedProps");
    expectRejected(withIacCode({ alibabaCloud: { accessKeyId: "AK", endpoint: "x" } }), "forwardedProps");
  });

  it("requires schemaVersion 1", () => {
    expectRejected(withIacCode({ schemaVersion: 2 }), "forwardedProps");
  });

  it("bounds rosInvocationId to 1..256 characters", () => {
    expect(() => validateRunInput(withIacCode({ rosInvocationId: "r".repeat(256) }), config)).not.toThrow();
    const error = expectRejected(withIacCode({ rosInvocationId: "r".repeat(257) }), "forwardedProps");
    expect(error.params.detail).toContain("rosInvocationId");
    expect(error.params.detail).not.toContain("rrrr");
    expectRejected(withIacCode({ rosInvocationId: "" }), "forwardedProps");
  });

  it("rejects a secret of the wrong type without echoing it", () => {
    const error = expectRejected(withIacCode({ llmApiKey: 123456789 }), "forwardedProps");
    expect(error.params.detail).not.toContain("123456789");
  });

  it("checks enums, booleans and the thinking budget", () => {
    expectRejected(withIacCode({ candidatePresentation: "fancy" }), "forwardedProps");
    expectRejected(withIacCode({ runMode: "batch" }), "forwardedProps");
    expectRejected(withIacCode({ cleanupOnly: "yes" }), "forwardedProps");
    expectRejected(withIacCode({ thinking: { enabled: true, budget: 0 } }), "forwardedProps");
    expectRejected(withIacCode({ thinking: { enabled: true, budget: 1.5 } }), "forwardedProps");
    expectRejected(withIacCode({ thinking: { enabled: null } }), "forwardedProps");
    expect(() => validateRunInput(withIacCode({ thinking: { effort: "high" } }), config)).not.toThrow();
  });

  it("accepts null for every optional value, as the reference does, but not for a required one or a flag", () => {
    const input = withIacCode({
      model: null,
      llmApiKey: null,
      llmHeaders: null,
      thinking: null,
      userId: null,
      channel: null,
      preferredLanguage: null,
      candidatePresentation: null,
      runMode: null,
      pipelineName: null,
      guidanceId: null,
      inputDigest: null,
      executionFence: null,
      alibabaCloud: null,
    });
    expect(() => validateRunInput(input, config)).not.toThrow();
    expect(() => validateRunInput(withIacCode({ thinking: { effort: null, budget: null } }), config)).not.toThrow();
    expect(() => validateRunInput(withIacCode({ alibabaCloud: { accessKeyId: null, regionId: null } }), config)).not.toThrow();
    expectRejected(withIacCode({ rosInvocationId: null }), "forwardedProps");
    expectRejected(withIacCode({ cwd: null }), "forwardedProps");
    expectRejected(withIacCode({ cleanupOnly: null }), "forwardedProps");
    expectRejected(withIacCode({ activeGuidance: null }), "forwardedProps");
  });
});

describe("validateRunInput: cwd (R-EXT-3)", () => {
  it("rejects a relative cwd", () => {
    const error = expectRejected(withIacCode({ cwd: "project" }), "forwardedProps");
    expect(error.params.detail).toContain("cwd");
  });

  it("accepts an allowed root itself, and creates a directory below it that does not exist yet, private (0700)", () => {
    expect(() => validateRunInput(withIacCode({ cwd: root }), config)).not.toThrow();
    const created = path.join(root, "new", "deeper");
    expect(() => validateRunInput(withIacCode({ cwd: created }), config)).not.toThrow();
    expect(statSync(created).isDirectory()).toBe(true);
    expect(statSync(created).mode & 0o777).toBe(0o700);
    expect(statSync(path.join(root, "new")).mode & 0o777).toBe(0o700);
  });

  it("creates nothing for a request refused for another reason", () => {
    const never = path.join(root, "never-created");
    expectRejected({ ...withIacCode({ cwd: never }), messages: [] }, "userMessage");
    expect(() => statSync(never)).toThrow();
  });

  it("refuses a cwd that exists and is not a directory, and one below a file", () => {
    const file = path.join(root, "a-file");
    writeFileSync(file, "x");
    expect(expectRejected(withIacCode({ cwd: file }), "forwardedProps").params.detail).toContain("is not an existing directory");
    expectRejected(withIacCode({ cwd: path.join(file, "below") }), "forwardedProps");
  });

  it("refuses a missing path that climbs back out through a link's `..`", () => {
    const link = path.join(root, "climbing-link");
    symlinkSync("missing/../../..", link);
    expectRejected(withIacCode({ cwd: link }), "forwardedProps");
  });

  it("expands `~/…` to the service user's home, then holds it to the allowed roots", () => {
    const home = os.homedir();
    const inHome = validateRunInput(withIacCode({ cwd: "~" }), { allowedCwds: [home] });
    expect(inHome.forwardedProps.iacCode.cwd).toBe(home);
    expectRejected(withIacCode({ cwd: "~/somewhere" }), "forwardedProps");
    expectRejected(withIacCode({ cwd: "~other/x" }), "forwardedProps");
  });

  it("rejects a cwd outside every allowed root", () => {
    const error = expectRejected(withIacCode({ cwd: outside }), "forwardedProps");
    expect(error.params.detail).not.toContain(outside);
  });

  it("rejects a `..` escape", () => {
    expectRejected(withIacCode({ cwd: `${root}/project/../../${path.basename(outside)}` }), "forwardedProps");
  });

  it("does not take a sibling sharing the root's prefix for a subdirectory", () => {
    expectRejected(withIacCode({ cwd: `${root}x` }), "forwardedProps");
  });

  it("rejects a symlink inside a root that leads out of it", () => {
    const link = path.join(root, "escape");
    symlinkSync(outside, link);
    expectRejected(withIacCode({ cwd: path.join(link, "sub") }), "forwardedProps");
  });

  (process.platform === "win32" ? it.skip : it)("rejects a Windows drive path on POSIX, where it is not absolute", () => {
    expectRejected(withIacCode({ cwd: "C:\\work" }), "forwardedProps");
  });
});

describe("validateRunInput: user content (R-IN-10, R-IN-11)", () => {
  it("accepts text parts and inline images of every allowed type", () => {
    const content = [
      { type: "text", text: "look" },
      ...["image/png", "image/jpeg", "image/gif", "image/webp", "IMAGE/PNG"].map((mime) => image(TINY_PNG, mime)),
    ];
    expect(() => validateRunInput(withUserContent(content), config)).not.toThrow();
  });

  it("rejects a remote image URL", () => {
    const remote = { type: "image", source: { type: "url", value: "https://example.com/a.png", mimeType: "image/png" } };
    const error = expectRejected(withUserContent([remote]), "remoteMedia");
    expect(error.params.detail).toContain("/source/type");
    expect(error.params.detail).not.toContain("example.com");
  });

  it("rejects a provider file handle", () => {
    expectRejected(withUserContent([{ type: "image", source: { type: "file", value: "file-123" } }]), "remoteMedia");
  });

  it.each([
    ["audio", { type: "audio", source: { type: "data", value: TINY_PNG, mimeType: "audio/wav" } }],
    ["video", { type: "video", source: { type: "data", value: TINY_PNG, mimeType: "video/mp4" } }],
    ["document", { type: "document", source: { type: "data", value: TINY_PNG, mimeType: "application/pdf" } }],
    ["binary", { type: "binary", mimeType: "application/octet-stream", data: TINY_PNG }],
  ])("rejects a %s part", (_kind, part) => {
    expectRejected(withUserContent([{ type: "text", text: "x" }, part]), "userContent");
  });

  it("rejects an image type outside png/jpeg/gif/webp", () => {
    expectRejected(withUserContent([image(TINY_PNG, "image/svg+xml")]), "imageMediaType");
  });

  it("rejects image data that is not padded base64", () => {
    expectRejected(withUserContent([image("data:image/png;base64,AAAA")]), "imageData");
    expectRejected(withUserContent([image("AAA")]), "imageData");
    expectRejected(withUserContent([image("")]), "imageData");
  });

  it("rejects a text part without text", () => {
    expectRejected(withUserContent([{ type: "text" }]), "userContent");
  });

  it("accepts an image of exactly 8 MiB", () => {
    expect(() => validateRunInput(withUserContent([image(IMAGE_8_MIB)]), config)).not.toThrow();
  });

  it("rejects an image of 8 MiB + 1 byte", () => {
    expectRejected(withUserContent([image(IMAGE_8_MIB_PLUS_1)]), "imageTooLarge");
  });

  it("rejects images totalling more than 10 MiB", () => {
    expectRejected(withUserContent([image(IMAGE_6_MIB), image(IMAGE_5_MIB)]), "imagesTooLarge");
  });
});

describe("iac-code extension schema", () => {
  it("has exactly the fields of IacCodeExtension", () => {
    const fields = {
      schemaVersion: true,
      rosInvocationId: true,
      cwd: true,
      model: true,
      llmApiKey: true,
      thinking: true,
      userId: true,
      channel: true,
      preferredLanguage: true,
      candidatePresentation: true,
      runMode: true,
      pipelineName: true,
      cleanupOnly: true,
      llmHeaders: true,
      activeGuidance: true,
      guidanceId: true,
      inputDigest: true,
      executionFence: true,
      alibabaCloud: true,
    } satisfies Record<keyof IacCodeExtension, true>;
    const schema = JSON.parse(readFileSync(path.join(SCHEMAS_DIR, "iac-code-extension.schema.json"), "utf8"));
    expect(Object.keys(schema.properties).sort()).toEqual(Object.keys(fields).sort());
  });
});

describe("nesting depth", () => {
  it("refuses a body nested deeper than MAX_JSON_DEPTH before anything walks it recursively", async () => {
    const { MAX_JSON_DEPTH, jsonDepth } = await import("../../lib/validation.js");
    let deep: unknown = 1;
    for (let i = 0; i < 50_000; i++) deep = { a: deep };
    expect(jsonDepth(deep)).toBeGreaterThan(MAX_JSON_DEPTH);
    expect(jsonDepth({ a: [{ b: 1 }] })).toBe(3);
    expect(() => validateRunInput({ ...validInput(), state: deep }, config)).toThrow(expect.objectContaining({ code: "INVALID_INPUT" }));
  });
});
