import { describe, expect, it, jest, afterEach } from "@jest/globals";
import { createHash } from "node:crypto";
import type { UserMessage } from "@ag-ui/core";
import { contextIdFor, iacCodeMetadata, latestUserMessage, toSendMessageParams, toUserParts } from "../../lib/a2a/request-mapping.js";
import type { IacCodeExtension, ValidRunInput } from "../../lib/model/run-input.js";

const PNG = Buffer.from("89504e470d0a1a0a", "hex").toString("base64");
const image = (mimeType: string, metadata?: unknown) =>
  ({ type: "image", source: { type: "data", value: PNG, mimeType }, ...(metadata === undefined ? {} : { metadata }) }) as const;
const user = (id: string, content: UserMessage["content"]): UserMessage => ({ id, role: "user", content });

const minimalExtension: IacCodeExtension = { schemaVersion: 1, rosInvocationId: "ros-1", cwd: "/work/project" };

function runInput(overrides: Partial<ValidRunInput> = {}): ValidRunInput {
  return {
    threadId: "thread-1",
    runId: "run-1",
    state: {},
    messages: [user("m-1", "Deploy a VPC")],
    tools: [],
    context: [],
    forwardedProps: { iacCode: minimalExtension },
    ...overrides,
  };
}

describe("contextIdFor", () => {
  it("is agui- and the first 40 lowercase hex chars of SHA-256 of the UTF-8 thread id", () => {
    for (const threadId of ["thread-1", "スレッド", ""]) {
      const digest = createHash("sha256").update(Buffer.from(threadId, "utf8")).digest("hex");
      expect(contextIdFor(threadId)).toBe(`agui-${digest.slice(0, 40)}`);
    }
  });

  it("matches known answers (sha256sum of the UTF-8 bytes)", () => {
    expect(contextIdFor("thread-1")).toBe("agui-4b0a5fefc328e6b9257bc535e3c5d26fec36b52f");
    expect(contextIdFor("スレッド")).toBe("agui-313622ffad628bad548415d7ccb3b2c9137a202f");
  });
});

describe("latestUserMessage", () => {
  it("finds the newest user message, skipping later messages of other roles", () => {
    const messages = [
      user("u-1", "first"),
      { id: "a-1", role: "assistant" as const, content: "ok" },
      user("u-2", "second"),
      { id: "a-2", role: "assistant" as const, content: "done" },
    ];
    expect(latestUserMessage({ messages })?.id).toBe("u-2");
  });

  it("is undefined without a user message", () => {
    expect(latestUserMessage({ messages: [{ id: "a", role: "assistant", content: "hi" }] })).toBeUndefined();
  });
});

describe("toUserParts", () => {
  it("turns string content into one text part", () => {
    expect(toUserParts(user("m", "hello"))).toEqual([{ text: "hello" }]);
  });

  it("maps text parts and inline images in order, numbering unnamed images from 1", () => {
    const parts = toUserParts(user("m", [image("image/png"), { type: "text", text: "and" }, image("IMAGE/JPEG")]));
    expect(parts).toEqual([
      { data: { filename: "agui-image-1", bytes: PNG }, mediaType: "image/png" },
      { text: "and" },
      { data: { filename: "agui-image-2", bytes: PNG }, mediaType: "image/jpeg" },
    ]);
  });

  it("keeps a plain filename from the part's metadata", () => {
    const [part] = toUserParts(user("m", [image("image/webp", { filename: "diagram.webp" })]));
    expect(part).toEqual({ data: { filename: "diagram.webp", bytes: PNG }, mediaType: "image/webp" });
  });

  it.each(["../etc/passwd", "dir/name.png", "a\\b.png", "..", "", "x".repeat(256), "bell\u0007.png"])(
    "falls back to agui-image-<n> for the filename %j",
    (filename) => {
      const [part] = toUserParts(user("m", [image("image/gif", { filename })]));
      expect(part).toEqual({ data: { filename: "agui-image-1", bytes: PNG }, mediaType: "image/gif" });
    },
  );

  it("refuses a remote image if handed one without validation", () => {
    const remote = { type: "image", source: { type: "url", value: "https://example.com/a.png" } } as const;
    expect(() => toUserParts(user("m", [remote]))).toThrow(expect.objectContaining({ code: "INVALID_INPUT" }));
  });
});

describe("iacCodeMetadata", () => {
  it("maps every extension field to the kernel's names", () => {
    const ext: IacCodeExtension = {
      schemaVersion: 1,
      rosInvocationId: "ros-9",
      cwd: "/work/a/../project",
      model: "  qwen-max  ",
      llmApiKey: "sk-secret",
      llmHeaders: { "X-Trace": "t-1" },
      thinking: { enabled: true, effort: "high", budget: 2048 },
      userId: "u-1",
      channel: "console",
      preferredLanguage: "ja-JP",
      candidatePresentation: "rich",
      runMode: "pipeline",
      pipelineName: "deploy",
      cleanupOnly: true,
      alibabaCloud: { accessKeyId: "AK", accessKeySecret: "SK", securityToken: "STS", regionId: "cn-hangzhou" },
    };
    expect(iacCodeMetadata(ext, "ja")).toEqual({
      cwd: "/work/project",
      iac_code_model: "qwen-max",
      iac_code_api_key: "sk-secret",
      thinking: { enabled: true, effort: "high", budget: 2048 },
      user_id: "u-1",
      channel: "console",
      candidatePresentation: "rich",
      run_mode: "pipeline",
      pipeline_name: "deploy",
      cleanupOnly: true,
      rosInvocationId: "ros-9",
      preferredLanguage: "ja",
      llm_headers: { "X-Trace": "t-1" },
      alibaba_cloud_access_key_id: "AK",
      alibaba_cloud_access_key_secret: "SK",
      alibaba_cloud_security_token: "STS",
      alibaba_cloud_region_id: "cn-hangzhou",
    });
  });

  it("drops what was not sent, and always has cleanupOnly and preferredLanguage; llm_headers only when sent", () => {
    const metadata = iacCodeMetadata(minimalExtension, "en");
    expect(metadata).toStrictEqual({
      cwd: "/work/project",
      cleanupOnly: false,
      rosInvocationId: "ros-1",
      preferredLanguage: "en",
    });
    expect(iacCodeMetadata({ ...minimalExtension, llmHeaders: {} }, "en").llm_headers).toStrictEqual({});
  });

  it("sends nothing for an optional value sent as null, and reads thinking without enabled as disabled", () => {
    const metadata = iacCodeMetadata(
      { ...minimalExtension, model: null, llmHeaders: null, userId: null, runMode: null, thinking: { effort: "low", budget: null } },
      "en",
    );
    expect(metadata).toStrictEqual({
      cwd: "/work/project",
      cleanupOnly: false,
      rosInvocationId: "ros-1",
      preferredLanguage: "en",
      thinking: { enabled: false, effort: "low" },
    });
  });

  it("drops optional thinking fields and a blank model", () => {
    const metadata = iacCodeMetadata({ ...minimalExtension, model: "   ", thinking: { enabled: false } }, "en");
    expect(metadata).not.toHaveProperty("iac_code_model");
    expect(metadata.thinking).toStrictEqual({ enabled: false });
  });

  it("sends the execution fence, guidance id and input digest whenever they are given, guidance run or not", () => {
    const executionFence = {
      version: "session-handoff-v1",
      owner: { sandboxId: "sb-2", activationId: "act-2", leaseId: "l-2", runId: "r-2" },
    };
    const metadata = iacCodeMetadata({ ...minimalExtension, executionFence, guidanceId: "g-1", inputDigest: "d-1" }, "en");
    expect(metadata).toMatchObject({ execution_fence: executionFence, guidance_id: "g-1", input_digest: "d-1" });
    const guided = iacCodeMetadata(
      { ...minimalExtension, activeGuidance: true, runMode: "pipeline", guidanceId: "g-2", inputDigest: "d-2" },
      "en",
    );
    expect(guided).toMatchObject({ guidance_id: "g-2", input_digest: "d-2" });
  });

  it("sends no fence, guidance id or input digest sent as null", () => {
    const metadata = iacCodeMetadata({ ...minimalExtension, executionFence: null, guidanceId: null, inputDigest: null }, "en");
    expect(metadata).not.toHaveProperty("execution_fence");
    expect(metadata).not.toHaveProperty("guidance_id");
    expect(metadata).not.toHaveProperty("input_digest");
  });

  it("sends only the cloud fields that were given", () => {
    const metadata = iacCodeMetadata({ ...minimalExtension, alibabaCloud: { regionId: "cn-beijing" } }, "en");
    expect(Object.keys(metadata).filter((key) => key.startsWith("alibaba_cloud_"))).toEqual(["alibaba_cloud_region_id"]);
  });
});

describe("toSendMessageParams", () => {
  afterEach(() => {
    jest.restoreAllMocks();
  });

  it("builds a first-turn message without a taskId", () => {
    const params = toSendMessageParams(runInput(), { language: "en" });
    expect(params).toStrictEqual({
      message: {
        messageId: "m-1",
        role: "ROLE_USER",
        parts: [{ text: "Deploy a VPC" }],
        contextId: contextIdFor("thread-1"),
        metadata: { iac_code: iacCodeMetadata(minimalExtension, "en") },
      },
      configuration: { acceptedOutputModes: ["text/plain"] },
    });
  });

  it("puts a later turn on the execution's task, using the latest user message", () => {
    const input = runInput({ messages: [user("m-1", "first"), { id: "a-1", role: "assistant", content: "ok" }, user("m-2", "second")] });
    const { message } = toSendMessageParams(input, { taskId: "task-7", language: "ja" });
    expect(message.taskId).toBe("task-7");
    expect(message.messageId).toBe("m-2");
    expect(message.parts).toEqual([{ text: "second" }]);
    expect(message.metadata.iac_code.preferredLanguage).toBe("ja");
  });

  it("logs nothing, since the params carry credentials", () => {
    const spies = (["log", "info", "debug", "warn", "error", "trace"] as const).map((method) =>
      jest.spyOn(console, method).mockImplementation(() => undefined),
    );
    const ext = { ...minimalExtension, llmApiKey: "sk-secret", alibabaCloud: { accessKeySecret: "SK" } };
    toSendMessageParams(runInput({ forwardedProps: { iacCode: ext } }), { language: "en" });
    for (const spy of spies) expect(spy).not.toHaveBeenCalled();
  });
});
