/**
 * A RunAgentInput as validation admits it (`validation.ts`): the shape the
 * rest of the service works with, apart from the code that checks it.
 */
import type { RunAgentInput } from "@ag-ui/core";

/** An optional field of the extension: omitted, or null as a real client sends it. */
export type Optional<T> = T | null | undefined;

/**
 * `forwardedProps.iacCode`, as `schemas/iac-code-extension.schema.json` admits it,
 * but for `cwd`, which validation gives back absolute (`~/…` expanded).
 */
export interface IacCodeExtension {
  schemaVersion: 1;
  rosInvocationId: string;
  cwd: string;
  model?: Optional<string>;
  llmApiKey?: Optional<string>;
  /** Credentials for the kernel's LLM calls: never logged, digested or persisted. */
  llmHeaders?: Optional<Record<string, string>>;
  thinking?: Optional<{ enabled?: boolean; effort?: Optional<string>; budget?: Optional<number> }>;
  userId?: Optional<string>;
  channel?: Optional<string>;
  preferredLanguage?: Optional<string>;
  candidatePresentation?: Optional<"standard" | "rich">;
  runMode?: Optional<"normal" | "pipeline">;
  pipelineName?: Optional<string>;
  cleanupOnly?: boolean;
  /** With runMode "pipeline": a guidance run, which steers the thread's running task (see `threads/guidance.ts`). */
  activeGuidance?: boolean;
  guidanceId?: Optional<string>;
  inputDigest?: Optional<string>;
  /** The owner of the session's writes: sent on as `execution_fence`, kept with the thread (see `threads/fence.ts`). */
  executionFence?: Optional<Record<string, unknown>>;
  alibabaCloud?: Optional<{
    accessKeyId?: Optional<string>;
    accessKeySecret?: Optional<string>;
    securityToken?: Optional<string>;
    regionId?: Optional<string>;
  }>;
}

export type ValidRunInput = Omit<RunAgentInput, "forwardedProps"> & {
  forwardedProps: { iacCode: IacCodeExtension } & Record<string, unknown>;
};
