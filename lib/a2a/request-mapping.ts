/**
 * RunAgentInput → the params of an A2A `SendStreamingMessage` (wire contract
 * §1). Pure functions over an input `validateRunInput` has admitted. Nothing
 * here logs: the metadata carries the caller's credentials to the kernel.
 */
import { createHash } from "node:crypto";
import type { ImagePart, RunAgentInput, UserMessage } from "@ag-ui/core";
import { AguiError } from "../errors.js";
import { detailParams } from "../i18n/detail.js";
import type { IacCodeExtension, ValidRunInput } from "../model/run-input.js";
import { realWorkspacePath } from "../workspace.js";

/**
 * A2A 1.0 parts as ProtoJSON, the form the kernel reads (the SDK's `Part`
 * type is the decoded `$case` form). An image is a data part whose value is
 * `{filename, bytes}`: that is the kernel's contract, not a file part.
 */
export type A2aTextPart = { text: string };
export type A2aImagePart = { data: { filename: string; bytes: string }; mediaType: string };
export type A2aUserPart = A2aTextPart | A2aImagePart;

/** `message.metadata.iac_code`; the field names are the kernel's. */
export interface IacCodeMetadata {
  cwd: string;
  iac_code_model?: string;
  iac_code_api_key?: string;
  thinking?: { enabled: boolean; effort?: string; budget?: number };
  user_id?: string;
  channel?: string;
  candidatePresentation?: "standard" | "rich";
  run_mode?: "normal" | "pipeline";
  pipeline_name?: string;
  cleanupOnly: boolean;
  rosInvocationId: string;
  preferredLanguage: string;
  /** Only when the client sent headers (an empty object included). */
  llm_headers?: Record<string, string>;
  /** Whenever the request carries them (wire contract §2); a guidance run needs both (see `threads/guidance.ts`). */
  guidance_id?: string;
  input_digest?: string;
  /** The owner of the session's writes, as the request names it: the kernel enforces it (see `threads/fence.ts`). */
  execution_fence?: Record<string, unknown>;
  alibaba_cloud_access_key_id?: string;
  alibaba_cloud_access_key_secret?: string;
  alibaba_cloud_security_token?: string;
  alibaba_cloud_region_id?: string;
}

export interface SendMessageParams {
  message: {
    messageId: string;
    role: "ROLE_USER";
    parts: A2aUserPart[];
    contextId: string;
    taskId?: string;
    metadata: { iac_code: IacCodeMetadata };
  };
  configuration: { acceptedOutputModes: string[] };
}

/** One A2A context per AG-UI thread: `agui-` + the first 40 hex chars of SHA-256(UTF-8 threadId). */
export function contextIdFor(threadId: string): string {
  return "agui-" + createHash("sha256").update(threadId, "utf8").digest("hex").slice(0, 40);
}

/** The message a new run sends (R-IN-5); undefined when there is none. */
export function latestUserMessage(input: Pick<RunAgentInput, "messages">): UserMessage | undefined {
  for (let i = input.messages.length - 1; i >= 0; i--) {
    const message = input.messages[i]!;
    if (message.role === "user") return message;
  }
  return undefined;
}

const MAX_FILENAME_BYTES = 255;

/** A client-chosen name is only passed on when it cannot be read as a path. */
function isPlainFilename(name: string): boolean {
  return (
    name !== "" &&
    name !== "." &&
    name !== ".." &&
    Buffer.byteLength(name, "utf8") <= MAX_FILENAME_BYTES &&
    !/[/\\\u0000-\u001f\u007f]/.test(name)
  );
}

/** @ag-ui/core's ImagePart has no filename; the reference adapter read `metadata.filename`. */
function filenameOf(part: ImagePart, fallback: string): string {
  const metadata: unknown = part.metadata;
  const name = typeof metadata === "object" && metadata !== null ? (metadata as { filename?: unknown }).filename : undefined;
  return typeof name === "string" && isPlainFilename(name) ? name : fallback;
}

/**
 * A user message as A2A parts, images as the client sent them. What the
 * kernel receives is made from these by `images.ts` before the run starts
 * (large images resized, as the reference adapter did), and passed to
 * `toSendMessageParams` as `userParts`.
 */
export function toUserParts(message: UserMessage): A2aUserPart[] {
  if (typeof message.content === "string") return [{ text: message.content }];
  let images = 0;
  return message.content.map((part, index): A2aUserPart => {
    if (part.type === "text") return { text: part.text };
    if (part.type === "image" && part.source.type === "data") {
      images += 1;
      return {
        data: { filename: filenameOf(part, `agui-image-${images}`), bytes: part.source.value },
        mediaType: part.source.mimeType.toLowerCase(),
      };
    }
    // Unreachable after validateRunInput; kept so an unchecked input cannot smuggle a URL through.
    throw new AguiError("INVALID_INPUT", { reason: "userContent", ...detailParams(`/content/${index}`, "unsupportedPart") });
  });
}

/** The record less its undefined and null values: an optional field the client sent as null is not sent on. */
function withoutEmpty<T extends object>(record: T): { [K in keyof T]: Exclude<T[K], null> } {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined && value !== null)) as {
    [K in keyof T]: Exclude<T[K], null>;
  };
}

/** `metadata.iac_code` per the wire contract's table; `language` is the normalised request language. */
export function iacCodeMetadata(ext: IacCodeExtension, language: string): IacCodeMetadata {
  const thinking = ext.thinking;
  const cloud = ext.alibabaCloud;
  return withoutEmpty({
    cwd: realWorkspacePath(ext.cwd),
    // An all-blank model is no override at all.
    iac_code_model: ext.model?.trim() || undefined,
    iac_code_api_key: ext.llmApiKey,
    thinking: thinking
      ? withoutEmpty({
          // The reference reads a thinking object without `enabled` as disabled.
          enabled: thinking.enabled ?? false,
          effort: thinking.effort ?? undefined,
          budget: typeof thinking.budget === "number" && thinking.budget > 0 ? thinking.budget : undefined,
        })
      : undefined,
    user_id: ext.userId,
    channel: ext.channel,
    candidatePresentation: ext.candidatePresentation,
    run_mode: ext.runMode,
    pipeline_name: ext.pipelineName,
    cleanupOnly: ext.cleanupOnly === true,
    rosInvocationId: ext.rosInvocationId,
    preferredLanguage: language,
    llm_headers: ext.llmHeaders ?? undefined,
    // What lets the kernel tell one guidance from another (see `threads/guidance.ts`), and whose writes it accepts.
    guidance_id: ext.guidanceId,
    input_digest: ext.inputDigest,
    execution_fence: ext.executionFence,
    alibaba_cloud_access_key_id: cloud?.accessKeyId,
    alibaba_cloud_access_key_secret: cloud?.accessKeySecret,
    alibaba_cloud_security_token: cloud?.securityToken,
    alibaba_cloud_region_id: cloud?.regionId,
  });
}

/**
 * The params of the `SendStreamingMessage` that starts a new turn: the latest
 * user message, on the thread's context, on `taskId` when the execution
 * already has a task (every call but its first).
 */
export function toSendMessageParams(
  input: ValidRunInput,
  options: { taskId?: string; language: string; userParts?: A2aUserPart[] },
): SendMessageParams {
  const message = latestUserMessage(input);
  if (!message) throw new AguiError("INVALID_INPUT", { reason: "userMessage", ...detailParams("/messages", "userMessageNeeded") });
  return {
    message: withoutEmpty({
      messageId: message.id,
      role: "ROLE_USER" as const,
      parts: options.userParts ?? toUserParts(message),
      contextId: contextIdFor(input.threadId),
      taskId: options.taskId,
      metadata: { iac_code: iacCodeMetadata(input.forwardedProps.iacCode, options.language) },
    }),
    configuration: { acceptedOutputModes: ["text/plain"] },
  };
}
